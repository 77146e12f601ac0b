package dev.sandboxkit.testkit;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The extension, tested by running small fixture classes with the JUnit Platform test kit and looking at
 * their events and at what they left behind in the spy driver. The fixtures are static nested classes,
 * which neither Surefire nor a class selector on this class runs on their own.
 */
class SandboxExtensionTest {

    private static EngineExecutionResults run(Class<?> fixture, Map<String, String> systemProperties) {
        Map<String, String> previous = new HashMap<>();
        systemProperties.forEach((k, v) -> previous.put(k, v == null ? System.clearProperty(k) : System.setProperty(k, v)));
        try {
            return EngineTestKit.engine("junit-jupiter").selectors(selectClass(fixture)).execute();
        } finally {
            previous.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }

    private static EngineExecutionResults run(Class<?> fixture) {
        return run(fixture, Map.of());
    }

    private static String failures(Events events) {
        List<String> out = new ArrayList<>();
        events.failed().stream().forEach(e -> out.add(e.getTestDescriptor().getDisplayName() + ": "
                + e.getPayload(TestExecutionResult.class)
                .flatMap(TestExecutionResult::getThrowable).map(Throwable::toString).orElse("?")));
        return String.join("\n", out);
    }

    private static Throwable throwableOf(Event event) {
        return event.getPayload(TestExecutionResult.class)
                .flatMap(TestExecutionResult::getThrowable).orElseThrow();
    }

    @Nested
    @DisplayName("injection and clean-up")
    class Injection {
        @Test
        @DisplayName("each test gets its own sandbox, destroyed (container and workdir) when the test ends")
        void destroyedAfterEachTest() {
            PerTest.reset();
            SpyDriverProvider.CREATED.clear();

            EngineExecutionResults results = run(PerTest.class);

            assertThat(results.testEvents().succeeded().count()).as(failures(results.allEvents())).isEqualTo(2);
            assertThat(PerTest.sessions).hasSize(2).doesNotHaveDuplicates();
            FakeDriver driver = SpyDriverProvider.CREATED.get(0);
            assertThat(SpyDriverProvider.CREATED).hasSize(1); // one manager for the class
            assertThat(driver.liveSandboxes()).isEmpty();
            assertThat(PerTest.extra).isNotNull();
            for (String id : List.of(PerTest.sessions.get(0), PerTest.sessions.get(1), PerTest.extra)) {
                assertThat(driver.workspaceExists("fake:" + id)).as("workdir of %s", id).isFalse();
            }
            assertThatThrownBy(() -> PerTest.manager.acquire("after", PerTest.spec))
                    .as("the manager is closed after the class").isInstanceOf(IllegalStateException.class);
        }

        @Test
        @DisplayName("parameters, fields, constructor and @BeforeEach share the test's sandbox; sessions from @BeforeAll live until the class ends")
        void sharingAndScopes() {
            Scopes.reset();
            SpyDriverProvider.CREATED.clear();

            EngineExecutionResults results = run(Scopes.class);

            assertThat(results.testEvents().succeeded().count()).as(failures(results.allEvents())).isEqualTo(2);
            FakeDriver driver = SpyDriverProvider.CREATED.get(0);
            assertThat(driver.workspaceExists("fake:" + Scopes.classSession)).as("class-level session destroyed")
                    .isFalse();
            assertThat(Scopes.perTest).hasSize(2).doesNotHaveDuplicates().doesNotContain(Scopes.classSession);
            assertThat(driver.liveSandboxes()).isEmpty();
        }

        @Test
        @DisplayName("a @Nested class shares its enclosing class's manager")
        void nestedSharesManager() {
            SpyDriverProvider.CREATED.clear();
            Outer.instanceIds.clear();

            EngineExecutionResults results = run(Outer.class);

            assertThat(results.testEvents().succeeded().count()).as(failures(results.allEvents())).isEqualTo(2);
            assertThat(SpyDriverProvider.CREATED).hasSize(1);
            assertThat(Outer.instanceIds).hasSize(2).containsOnly(Outer.instanceIds.get(0));
        }
    }

    @Nested
    @DisplayName("settings")
    class Settings {
        @Test
        @DisplayName("an explicit attribute wins over the system property, which fills an empty one")
        void precedence() {
            Images.seen.clear();

            EngineExecutionResults results = run(Images.class, Map.of(SandboxExtension.IMAGE_PROPERTY, "from-property:1"));

            assertThat(results.testEvents().succeeded().count()).as(failures(results.allEvents())).isEqualTo(2);
            assertThat(Images.seen).containsEntry("explicit", "explicit:1").containsEntry("property", "from-property:1");
        }

        @Test
        @DisplayName("an invalid idle timeout fails with a message that shows the expected format")
        void invalidIdleTimeout() {
            EngineExecutionResults results = run(BadTtl.class);

            assertThat(results.allEvents().failed().count()).isEqualTo(1);
            assertThat(throwableOf(results.allEvents().failed().stream().findFirst().orElseThrow()))
                    .hasMessageContaining("ISO-8601").hasMessageContaining("banana");
        }
    }

    @Nested
    @DisplayName("when the backend is unavailable")
    class Unavailable {
        @Test
        @DisplayName("fails by default, naming the driver and the fix")
        void failsByDefault() {
            EngineExecutionResults results = run(Missing.class, Map.of(SandboxExtension.CI_PROPERTY, "false"));

            assertThat(results.testEvents().succeeded().count()).isZero();
            assertThat(results.allEvents().aborted().count()).isZero();
            Event failed = results.allEvents().failed().stream().findFirst().orElseThrow();
            assertThat(throwableOf(failed)).hasMessageContaining("'not-on-the-classpath'")
                    .hasMessageContaining("To fix").hasMessageContaining("skipIfUnavailable");
        }

        @Test
        @DisplayName("skips with skipIfUnavailable = true when not on CI")
        void skipsOffCi() {
            EngineExecutionResults results = run(MissingMaySkip.class, Map.of(SandboxExtension.CI_PROPERTY, "false"));

            assertThat(results.allEvents().failed().count()).as(failures(results.allEvents())).isZero();
            assertThat(results.allEvents().aborted().count()).isEqualTo(1);
            assertThat(results.testEvents().succeeded().count()).isZero();
        }

        @Test
        @DisplayName("still fails with skipIfUnavailable = true on CI")
        void failsOnCi() {
            EngineExecutionResults results = run(MissingMaySkip.class, Map.of(SandboxExtension.CI_PROPERTY, "true"));

            assertThat(results.allEvents().aborted().count()).isZero();
            Event failed = results.allEvents().failed().stream().findFirst().orElseThrow();
            assertThat(throwableOf(failed)).hasMessageContaining("this is CI");
        }

        @Test
        @DisplayName("a method-level configuration fails that test only")
        void methodLevel() {
            EngineExecutionResults results = run(MethodLevel.class, Map.of(SandboxExtension.CI_PROPERTY, "false"));

            assertThat(results.testEvents().succeeded().count()).isEqualTo(1);
            assertThat(results.testEvents().failed().count()).isEqualTo(1);
        }

        @Test
        @DisplayName("CI is read from the system property first, then the CI environment variable")
        void ciDetection() {
            String previous = System.getProperty(SandboxExtension.CI_PROPERTY);
            try {
                System.setProperty(SandboxExtension.CI_PROPERTY, "true");
                assertThat(SandboxExtension.onCi()).isTrue();
                System.setProperty(SandboxExtension.CI_PROPERTY, "1");
                assertThat(SandboxExtension.onCi()).isTrue();
                System.setProperty(SandboxExtension.CI_PROPERTY, "false");
                assertThat(SandboxExtension.onCi()).isFalse();
                System.clearProperty(SandboxExtension.CI_PROPERTY);
                String env = System.getenv("CI");
                assertThat(SandboxExtension.onCi()).isEqualTo("true".equalsIgnoreCase(env) || "1".equals(env));
            } finally {
                if (previous == null) {
                    System.clearProperty(SandboxExtension.CI_PROPERTY);
                } else {
                    System.setProperty(SandboxExtension.CI_PROPERTY, previous);
                }
            }
        }
    }

    // ------------------------------------------------------------------ fixtures

    @SandboxTest(driver = SpyDriverProvider.NAME)
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    static class PerTest {
        static final List<String> sessions = new CopyOnWriteArrayList<>();
        static SandboxManager manager;
        static SandboxSpec spec;
        static String extra;

        static void reset() {
            sessions.clear();
            extra = null;
            manager = null;
            spec = null;
        }

        @Test
        @Order(1)
        void first(Sandbox sandbox, SandboxManager m, SandboxSpec s) {
            sessions.add(sandbox.sessionId());
            manager = m;
            spec = s;
            assertThat(sandbox.info().state()).isEqualTo(SessionState.ACTIVE);
        }

        @Test
        @Order(2)
        void second(Sandbox sandbox, SandboxManager m) {
            sessions.add(sandbox.sessionId());
            // The first test's session is gone already, while the class's manager is still open.
            assertThat(m.session(sessions.get(0))).map(info -> info.state()).contains(SessionState.DESTROYED);
            extra = m.acquire("extra-" + sandbox.sessionId(), SandboxSpec.builder().image("any:1").build()).sessionId();
        }
    }

    @SandboxTest(driver = SpyDriverProvider.NAME)
    static class Scopes {
        static String classSession;
        static final List<String> perTest = new CopyOnWriteArrayList<>();

        @InjectSandbox
        static Sandbox shared;

        @InjectSandbox
        Sandbox field;

        private final Sandbox fromConstructor;
        private Sandbox fromBeforeEach;

        Scopes(Sandbox fromConstructor) {
            this.fromConstructor = fromConstructor;
        }

        static void reset() {
            classSession = null;
            perTest.clear();
        }

        @BeforeAll
        static void beforeAll(Sandbox sandbox) {
            classSession = sandbox.sessionId();
            assertThat(shared.sessionId()).isEqualTo(classSession);
        }

        @BeforeEach
        void beforeEach(Sandbox sandbox) {
            fromBeforeEach = sandbox;
        }

        @Test
        void one(Sandbox sandbox) {
            check(sandbox);
        }

        @Test
        void two(Sandbox sandbox) {
            check(sandbox);
        }

        private void check(Sandbox sandbox) {
            assertThat(field.sessionId()).isEqualTo(sandbox.sessionId());
            assertThat(fromBeforeEach.sessionId()).isEqualTo(sandbox.sessionId());
            assertThat(fromConstructor.sessionId()).isEqualTo(sandbox.sessionId());
            assertThat(shared.info().state()).as("the class-level sandbox lives across tests")
                    .isEqualTo(SessionState.ACTIVE);
            perTest.add(sandbox.sessionId());
        }

        @AfterEach
        void afterEach(Sandbox sandbox) {
            assertThat(sandbox.sessionId()).isEqualTo(field.sessionId());
        }
    }

    @SandboxTest(driver = SpyDriverProvider.NAME)
    static class Outer {
        static final List<String> instanceIds = new CopyOnWriteArrayList<>();

        @Test
        void outer(SandboxManager manager) {
            instanceIds.add(manager.instanceId());
        }

        @Nested
        class Inner {
            @Test
            void inner(SandboxManager manager) {
                instanceIds.add(manager.instanceId());
            }
        }
    }

    static class Images {
        static final Map<String, String> seen = new ConcurrentHashMap<>();

        @Test
        @SandboxTest(driver = SpyDriverProvider.NAME, image = "explicit:1")
        void explicit(SandboxSpec spec) {
            seen.put("explicit", spec.image());
        }

        @Test
        @SandboxTest(driver = SpyDriverProvider.NAME)
        void property(SandboxSpec spec) {
            seen.put("property", spec.image());
        }
    }

    @SandboxTest(driver = SpyDriverProvider.NAME, idleTimeout = "banana")
    static class BadTtl {
        @Test
        void test(SandboxManager manager) {
            assertThat(manager).isNotNull();
        }
    }

    @SandboxTest(driver = "not-on-the-classpath")
    static class Missing {
        @Test
        void test(Sandbox sandbox) {
            assertThat(sandbox).isNotNull();
        }
    }

    @SandboxTest(driver = "not-on-the-classpath", skipIfUnavailable = true)
    static class MissingMaySkip {
        @Test
        void test(Sandbox sandbox) {
            assertThat(sandbox).isNotNull();
        }
    }

    static class MethodLevel {
        @Test
        @SandboxTest(driver = "not-on-the-classpath")
        void needsBackend() {
        }

        @Test
        void plain() {
        }
    }
}
