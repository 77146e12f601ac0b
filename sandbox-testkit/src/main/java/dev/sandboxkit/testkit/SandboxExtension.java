package dev.sandboxkit.testkit;

import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;
import org.opentest4j.TestAbortedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The JUnit 5 extension behind {@link SandboxTest}. It builds one {@link SandboxManager} per scope that
 * declares it (the annotated class, shared by its tests and {@code @Nested} classes, or the annotated
 * method), checks the backend when that scope starts, and injects:
 *
 * <ul>
 *   <li>{@link SandboxManager}: a view of the shared manager that records the sessions the test acquires;
 *       closing the view does nothing;</li>
 *   <li>{@link Sandbox}: a fresh session with a unique id, one per test, shared by that test's
 *       parameters, fields and {@code @BeforeEach}/{@code @AfterEach} methods;</li>
 *   <li>{@link SandboxSpec}: the spec the injected sandboxes use, to acquire more sessions.</li>
 * </ul>
 *
 * <p>Values go into parameters of those types and into fields marked {@link InjectSandbox}. What a test
 * (or a {@code @BeforeAll} method) acquired is destroyed when it ends, container and workdir; the
 * manager is closed, and its temporary workspace root deleted, when its scope ends. All of this lives
 * in the extension's own {@link ExtensionContext.Namespace} as {@link AutoCloseable} values, so JUnit
 * closes it even when a test fails.
 *
 * <p>Settings ({@link SandboxTest} attributes, then system properties): {@value #DRIVER_PROPERTY},
 * {@value #IMAGE_PROPERTY}, {@value #IDLE_TIMEOUT_PROPERTY}. When the backend cannot be reached the tests
 * fail with a message naming the driver, the endpoint and the fix; they are skipped only with
 * {@code skipIfUnavailable = true} off CI. CI is detected from the system property {@value #CI_PROPERTY},
 * else the environment variable {@code CI} ({@code true} or {@code 1}).
 *
 * <p>Thread-safety: callbacks are invoked by JUnit on the thread running the test; the state is kept in
 * thread-safe structures, so parallel test execution is supported.
 */
public final class SandboxExtension implements BeforeAllCallback, BeforeEachCallback, ParameterResolver {
    /** System property naming the driver when {@link SandboxTest#driver()} is empty. */
    public static final String DRIVER_PROPERTY = "sandboxkit.driver";
    /** System property naming the image when {@link SandboxTest#image()} is empty. */
    public static final String IMAGE_PROPERTY = "sandboxkit.test.image";
    /** System property holding the idle TTL (ISO-8601) when {@link SandboxTest#idleTimeout()} is empty. */
    public static final String IDLE_TIMEOUT_PROPERTY = "sandboxkit.idleTimeout";
    /** System property that, when set, replaces the {@code CI} environment variable for CI detection. */
    public static final String CI_PROPERTY = "sandboxkit.ci";

    private static final Logger log = LoggerFactory.getLogger(SandboxExtension.class);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SandboxExtension.class);
    private static final Set<Class<?>> INJECTABLE = Set.of(SandboxManager.class, Sandbox.class, SandboxSpec.class);
    private static final String FAKE_IMAGE = "sandboxkit-fake:latest";

    /** Called by JUnit when a test class uses {@link SandboxTest} or {@code @ExtendWith(SandboxExtension.class)}. */
    public SandboxExtension() {
    }

    /**
     * Checks the backend once for a class-level configuration, then fills static {@link InjectSandbox}
     * fields. Called by JUnit on the thread that runs the class, before its {@code @BeforeAll} methods.
     *
     * @param context the class's context
     */
    @Override
    public void beforeAll(ExtensionContext context) {
        ExtensionContext declaring = declaringContext(context);
        if (declaring.getTestMethod().isEmpty()) {
            requireAvailable(managerFor(declaring));
        }
        injectFields(context, context.getRequiredTestClass(), null);
    }

    /**
     * Checks the backend (a no-op when the class already did), then fills the test instances'
     * {@link InjectSandbox} fields. Called by JUnit on the thread that runs the test.
     *
     * @param context the test's context
     */
    @Override
    public void beforeEach(ExtensionContext context) {
        requireAvailable(managerFor(declaringContext(context)));
        for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
            injectFields(context, instance.getClass(), instance);
        }
    }

    /**
     * Whether the parameter is a {@link SandboxManager}, {@link Sandbox} or {@link SandboxSpec}. Called by JUnit.
     *
     * @param parameterContext the parameter
     * @param extensionContext the context asking
     * @return {@code true} for the injectable types
     */
    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return INJECTABLE.contains(parameterContext.getParameter().getType());
    }

    /**
     * Provides the value for a supported parameter. Called by JUnit on the thread that runs the test.
     *
     * @param parameterContext the parameter
     * @param extensionContext the context asking
     * @return the manager view, the test's sandbox, or the spec
     */
    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        return valueFor(parameterContext.getParameter().getType(), extensionContext);
    }

    /**
     * Resolves constructor parameters in the test method's context (with the default per-method
     * lifecycle), so that a constructor-injected sandbox is a fresh one per test as well.
     *
     * @param rootContext the root context
     * @return {@link ExtensionContextScope#TEST_METHOD}
     */
    @Override
    public ExtensionContextScope getTestInstantiationExtensionContextScope(ExtensionContext rootContext) {
        return ExtensionContextScope.TEST_METHOD;
    }

    // ------------------------------------------------------------------ injection

    private Object valueFor(Class<?> type, ExtensionContext context) {
        ManagerResource resource = managerFor(declaringContext(context));
        requireAvailable(resource);
        SessionRecorder recorder = recorderFor(context, resource);
        if (type == SandboxManager.class) {
            return recorder.view;
        }
        if (type == SandboxSpec.class) {
            return resource.spec();
        }
        return recorder.sandbox(context);
    }

    private void injectFields(ExtensionContext context, Class<?> type, Object instance) {
        boolean wantStatic = instance == null;
        List<Field> fields = AnnotationSupport.findAnnotatedFields(type, InjectSandbox.class,
                f -> Modifier.isStatic(f.getModifiers()) == wantStatic);
        for (Field field : fields) {
            if (!INJECTABLE.contains(field.getType()) || Modifier.isFinal(field.getModifiers())) {
                throw new ExtensionConfigurationException("@InjectSandbox field " + field
                        + " must be non-final and of type SandboxManager, Sandbox or SandboxSpec");
            }
            try {
                field.setAccessible(true);
                field.set(instance, valueFor(field.getType(), context));
            } catch (IllegalAccessException e) {
                throw new ExtensionConfigurationException("cannot set @InjectSandbox field " + field, e);
            }
        }
    }

    // ------------------------------------------------------------------ scopes and state

    /**
     * The context whose element carries the {@link SandboxTest} annotation (method, class, enclosing class);
     * without any, the outermost class, for an extension registered with {@code @ExtendWith} alone.
     */
    private static ExtensionContext declaringContext(ExtensionContext context) {
        for (ExtensionContext c = context; c != null; c = c.getParent().orElse(null)) {
            if (c.getElement().isPresent() && AnnotationSupport.isAnnotated(c.getElement().get(), SandboxTest.class)) {
                return c;
            }
        }
        ExtensionContext outermost = context;
        while (outermost.getParent().isPresent() && outermost.getParent().get().getTestClass().isPresent()) {
            outermost = outermost.getParent().get();
        }
        return outermost;
    }

    private static ManagerResource managerFor(ExtensionContext declaring) {
        Settings settings = Settings.of(declaring);
        // Keyed by the declaring context so that a lookup from a nested scope never builds a second manager.
        return declaring.getStore(NAMESPACE).getOrComputeIfAbsent(
                new ScopeKey("manager", declaring.getUniqueId()),
                k -> ManagerResource.start(settings, declaring.getDisplayName()), ManagerResource.class);
    }

    private static SessionRecorder recorderFor(ExtensionContext context, ManagerResource resource) {
        // Keyed by this context's id: a parent's recorder must not be found through the store hierarchy.
        return context.getStore(NAMESPACE).getOrComputeIfAbsent(
                new ScopeKey("sessions", context.getUniqueId()),
                k -> new SessionRecorder(resource), SessionRecorder.class);
    }

    private record ScopeKey(String kind, String uniqueId) {
    }

    // ------------------------------------------------------------------ availability

    private static void requireAvailable(ManagerResource resource) {
        if (resource.failure == null) {
            return;
        }
        String message = unavailableMessage(resource.settings, resource.failure);
        boolean ci = onCi();
        if (resource.settings.skipIfUnavailable() && !ci) {
            throw new TestAbortedException(message + " Skipped because skipIfUnavailable = true and this is not CI.",
                    resource.failure);
        }
        String tail = resource.settings.skipIfUnavailable() ? " Not skipped: this is CI (CI=true), where a missing"
                + " backend always fails." : "";
        // A fresh exception per test: JUnit may attach suppressed exceptions to what a test throws.
        throw resource.failure instanceof SandboxUnavailableException
                ? new SandboxUnavailableException(message + tail, resource.failure)
                : new SandboxConfigurationException(message + tail, resource.failure);
    }

    /** CI is detected from {@value #CI_PROPERTY} first (so tests can pretend either way), then the environment. */
    static boolean onCi() {
        String value = System.getProperty(CI_PROPERTY);
        if (value == null) {
            value = System.getenv("CI");
        }
        return value != null && (value.trim().equalsIgnoreCase("true") || value.trim().equals("1"));
    }

    private static String unavailableMessage(Settings settings, SandboxException failure) {
        String driver = settings.driver() != null ? settings.driver() : "auto-detected";
        boolean docker = settings.driver() == null || settings.driver().equals("docker");
        StringBuilder m = new StringBuilder("sandboxkit: no sandbox backend for these tests (driver '")
                .append(driver).append('\'');
        if (docker) {
            m.append(", Docker endpoint ").append(dockerEndpoint());
        }
        String why = String.valueOf(failure.getMessage()).strip();
        m.append("): ").append(why).append(why.endsWith(".") ? " To fix: " : ". To fix: ");
        if (docker) {
            m.append("start the Docker engine (on this project's machines: scripts/setup-docker.sh), or point "
                    + "DOCKER_HOST or -Dsandboxkit.docker.host at a running one; ");
        } else {
            m.append("make the '").append(driver).append("' backend reachable; ");
        }
        if (failure instanceof SandboxConfigurationException) {
            m.append("put the driver module on the test classpath (for example dev.sandboxkit:sandbox-docker) "
                    + "or choose another with @SandboxTest(driver = \"...\") or -D" + DRIVER_PROPERTY + "=...; ");
        }
        m.append("to skip instead on a machine without the backend, use @SandboxTest(skipIfUnavailable = true)"
                + " (never skips on CI).");
        return m.toString();
    }

    /** The endpoint the Docker driver uses: its property, then DOCKER_HOST, then the default socket. */
    static String dockerEndpoint() {
        String configured = System.getProperty("sandboxkit.docker.host");
        if (configured == null || configured.isBlank()) {
            configured = System.getenv("DOCKER_HOST");
        }
        return configured == null || configured.isBlank() ? "unix:///var/run/docker.sock" : configured;
    }

    // ------------------------------------------------------------------ settings

    /** The resolved settings of one declaring scope: attribute, else system property, else default ({@code null}). */
    record Settings(String driver, String image, Duration idleTimeout, boolean skipIfUnavailable) {

        static Settings of(ExtensionContext declaring) {
            Optional<SandboxTest> annotation = declaring.getElement()
                    .flatMap(e -> AnnotationSupport.findAnnotation(e, SandboxTest.class));
            String driver = pick(annotation.map(SandboxTest::driver), DRIVER_PROPERTY);
            String image = pick(annotation.map(SandboxTest::image), IMAGE_PROPERTY);
            String ttl = pick(annotation.map(SandboxTest::idleTimeout), IDLE_TIMEOUT_PROPERTY);
            Duration idle = null;
            if (ttl != null) {
                try {
                    idle = Duration.parse(ttl);
                } catch (DateTimeParseException e) {
                    throw new ExtensionConfigurationException("idleTimeout must be an ISO-8601 duration such as "
                            + "PT2S or PT30M, got: " + ttl, e);
                }
                if (idle.isNegative() || idle.isZero()) {
                    throw new ExtensionConfigurationException("idleTimeout must be positive, got: " + ttl);
                }
            }
            return new Settings(driver, image, idle, annotation.map(SandboxTest::skipIfUnavailable).orElse(false));
        }

        private static String pick(Optional<String> attribute, String property) {
            String value = attribute.filter(s -> !s.isBlank()).orElseGet(() -> System.getProperty(property));
            return value == null || value.isBlank() ? null : value.trim();
        }
    }

    // ------------------------------------------------------------------ stored resources

    /**
     * One manager and its temporary workspace root, or why it could not be built. Closed by JUnit when the
     * declaring scope ends: destroys sessions a recorder did not get to, closes the manager, deletes the root.
     */
    static final class ManagerResource implements AutoCloseable {
        final Settings settings;
        final SandboxManager manager;
        final SandboxException failure;
        private final Path workspaceRoot;
        private final Set<String> liveSessions = ConcurrentHashMap.newKeySet();
        private String image;

        private ManagerResource(Settings settings, SandboxManager manager, SandboxException failure, Path root) {
            this.settings = settings;
            this.manager = manager;
            this.failure = failure;
            this.workspaceRoot = root;
        }

        static ManagerResource start(Settings settings, String scope) {
            Path root;
            try {
                root = Files.createTempDirectory("sandboxkit-junit-");
            } catch (IOException e) {
                throw new ExtensionConfigurationException("cannot create a temporary workspace root", e);
            }
            // A fleet of its own, so that the orphan sweep of a test manager never removes containers of an
            // application (or another test JVM) sharing the engine, and theirs never remove ours.
            SandboxManager.Builder builder = SandboxManager.builder().workspaceRoot(root)
                    .fleet("junit-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12));
            if (settings.driver() != null) {
                builder.driver(settings.driver());
            }
            if (settings.idleTimeout() != null) {
                builder.idleTimeout(settings.idleTimeout());
            }
            try {
                SandboxManager manager = builder.build();
                log.debug("Sandbox manager {} ({}) for {}", manager.instanceId(), manager.driverName(), scope);
                return new ManagerResource(settings, manager, null, root);
            } catch (SandboxUnavailableException | SandboxConfigurationException e) {
                // Remembered, so every test of the scope reports it without trying the backend again.
                deleteQuietly(root);
                return new ManagerResource(settings, null, e, null);
            } catch (RuntimeException e) {
                deleteQuietly(root);
                throw e;
            }
        }

        /** The spec for injected sandboxes; the default image is built on first use only. */
        synchronized SandboxSpec spec() {
            if (image == null) {
                image = settings.image() != null ? settings.image() : defaultImage(manager.driverName());
            }
            return SandboxSpec.builder().image(image).build();
        }

        private static String defaultImage(String driverName) {
            switch (driverName) {
                case "docker":
                    return TestImages.busybox();
                case "fake":
                    return FAKE_IMAGE; // the fake runs no image
                default:
                    throw new ExtensionConfigurationException("no image configured for the '" + driverName
                            + "' driver: set @SandboxTest(image = \"...\") or -D" + IMAGE_PROPERTY
                            + "=... (TestImages builds local images for Docker only)");
            }
        }

        void track(String sessionId) {
            liveSessions.add(sessionId);
        }

        void destroyed(String sessionId) {
            liveSessions.remove(sessionId);
        }

        @Override
        public void close() {
            if (manager == null) {
                return;
            }
            List<RuntimeException> errors = new ArrayList<>();
            for (String id : List.copyOf(liveSessions)) {
                try {
                    manager.destroy(id);
                } catch (RuntimeException e) {
                    errors.add(e);
                }
            }
            try {
                manager.close();
            } catch (RuntimeException e) {
                errors.add(e);
            }
            deleteQuietly(workspaceRoot);
            throwFirst(errors, "closing the sandbox manager failed");
        }
    }

    /**
     * The sessions acquired in one scope (a test, or a class's {@code @BeforeAll} phase) and that scope's
     * sandbox. Closed by JUnit when the scope ends: destroys every session it recorded.
     */
    static final class SessionRecorder implements AutoCloseable {
        final RecordingSandboxManager view;
        private final ManagerResource resource;
        private Sandbox sandbox;

        SessionRecorder(ManagerResource resource) {
            this.resource = resource;
            this.view = new RecordingSandboxManager(resource.manager, resource::track);
        }

        synchronized Sandbox sandbox(ExtensionContext context) {
            if (sandbox == null) {
                sandbox = view.acquire(sessionId(context), resource.spec());
            }
            return sandbox;
        }

        @Override
        public void close() {
            List<RuntimeException> errors = new ArrayList<>();
            for (String id : view.acquiredSessions()) {
                try {
                    resource.manager.destroy(id);
                    resource.destroyed(id);
                } catch (RuntimeException e) {
                    errors.add(e);
                }
            }
            throwFirst(errors, "destroying the test's sandbox sessions failed");
        }

        /** A unique, readable id: the test method (or class) name plus a random suffix. */
        private static String sessionId(ExtensionContext context) {
            String base = context.getTestMethod().map(Method::getName)
                    .orElseGet(() -> context.getRequiredTestClass().getSimpleName())
                    .replaceAll("[^A-Za-z0-9._-]", "-");
            if (base.length() > 48) {
                base = base.substring(0, 48);
            }
            return "t-" + base + "-" + UUID.randomUUID().toString().substring(0, 8);
        }
    }

    private static void throwFirst(List<RuntimeException> errors, String what) {
        if (errors.isEmpty()) {
            return;
        }
        RuntimeException first = new IllegalStateException("sandboxkit: " + what + ": " + errors.get(0), errors.get(0));
        errors.subList(1, errors.size()).forEach(first::addSuppressed);
        throw first;
    }

    private static void deleteQuietly(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | RuntimeException e) {
            log.warn("Could not delete the temporary workspace root {}: {}", root, e.toString());
        }
    }
}
