package dev.sandboxkit.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Small local test images for the Docker driver, built without any registry and cached by content: the
 * tag is a short SHA-256 of the build context, so an image already built from the same files is reused
 * without building (across JVMs too: the engine keeps it).
 *
 * <pre>{@code
 * String image = TestImages.busybox();                       // sandboxkit-busybox:3f2a9c1d0b7e
 * String mine = TestImages.fromDockerfile(Path.of("src/test/docker/python"), "myapp-test");
 * }</pre>
 *
 * <p><b>Dependencies:</b> building talks to the engine through docker-java, an <em>optional</em>
 * dependency of the testkit, so users who build no images pay nothing. Add
 * {@code com.github.docker-java:docker-java-core} and {@code docker-java-transport-zerodep} to the test
 * classpath (the {@code sandbox-docker} module brings both). The engine is the one in the system property
 * {@code sandboxkit.docker.host}, else {@code DOCKER_HOST}, else {@code unix:///var/run/docker.sock}.
 *
 * <p>Thread-safe: builds are serialised within the JVM. Nothing is ever pulled.
 */
public final class TestImages {
    /** The repository {@link #busybox()} tags its image under. */
    public static final String BUSYBOX_REPOSITORY = "sandboxkit-busybox";
    /** System property pointing at a statically linked busybox binary; default {@code /bin/busybox}. */
    public static final String BUSYBOX_PROPERTY = "sandboxkit.busybox";

    /** Same as scripts/images/busybox/Dockerfile: no /tmp in the image, sandboxes mount a tmpfs there. */
    static final String BUSYBOX_DOCKERFILE = """
            FROM scratch
            COPY busybox /bin/busybox
            RUN ["/bin/busybox", "--install", "-s", "/bin"]
            """;
    private static final Pattern REPOSITORY = Pattern.compile("[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*");
    private static final Map<String, String> BUILT = new ConcurrentHashMap<>();
    private static final Object BUILD_LOCK = new Object();

    private TestImages() {
    }

    /**
     * A tiny image holding only the host's static busybox ({@code FROM scratch}), with its applets
     * installed in {@code /bin}: enough for {@code sh} and the usual tools. Built in about a second the
     * first time, then reused. Called on the caller's thread.
     *
     * @return the image reference, {@code sandboxkit-busybox:<hash>}
     * @throws IllegalStateException if there is no statically linked busybox (install {@code busybox-static})
     *                               or docker-java is not on the classpath
     * @throws dev.sandboxkit.SandboxUnavailableException if the engine cannot be reached
     */
    public static String busybox() {
        Path busybox = Path.of(System.getProperty(BUSYBOX_PROPERTY, "/bin/busybox"));
        requireStaticBusybox(busybox);
        Path context = null;
        try {
            context = Files.createTempDirectory("sandboxkit-busybox-");
            Files.writeString(context.resolve("Dockerfile"), BUSYBOX_DOCKERFILE);
            Files.copy(busybox, context.resolve("busybox"));
            return fromDockerfile(context, BUSYBOX_REPOSITORY);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare the busybox build context", e);
        } finally {
            deleteQuietly(context);
        }
    }

    /**
     * Builds the image in a build context directory (with a {@code Dockerfile} at its top) unless an image
     * with the same content hash exists already. The tag is the first 12 hex digits of a SHA-256 over every
     * file's relative path, executable bit and content. Called on the caller's thread.
     *
     * @param contextDir the build context
     * @param repository the repository to tag under, lower case, for example {@code myapp-test}
     * @return the image reference, {@code repository:<hash>}
     * @throws IllegalArgumentException if the directory has no Dockerfile or the repository name is invalid
     * @throws IllegalStateException    if docker-java is not on the classpath, or the build fails
     * @throws dev.sandboxkit.SandboxUnavailableException if the engine cannot be reached
     */
    public static String fromDockerfile(Path contextDir, String repository) {
        Objects.requireNonNull(contextDir, "contextDir");
        Objects.requireNonNull(repository, "repository");
        if (!REPOSITORY.matcher(repository).matches()) {
            throw new IllegalArgumentException("invalid image repository name (lower case, digits, '.', '_', '-', '/'): "
                    + repository);
        }
        if (!Files.isRegularFile(contextDir.resolve("Dockerfile"))) {
            throw new IllegalArgumentException("no Dockerfile in the build context " + contextDir.toAbsolutePath());
        }
        String reference = repository + ":" + contextHash(contextDir).substring(0, 12);
        if (BUILT.containsKey(reference)) {
            return reference;
        }
        requireDockerJava();
        synchronized (BUILD_LOCK) {
            if (!BUILT.containsKey(reference)) {
                DockerImageBuilder.buildIfAbsent(contextDir, reference);
                BUILT.put(reference, reference);
            }
        }
        return reference;
    }

    /**
     * The content hash of a build context, hex. Symbolic links are hashed by their target, not followed.
     *
     * @param contextDir the directory
     * @return 64 hex digits
     */
    static String contextHash(Path contextDir) {
        MessageDigest digest = sha256();
        try (Stream<Path> walk = Files.walk(contextDir)) {
            List<Path> files = walk.filter(p -> !Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS))
                    .sorted(Comparator.comparing(p -> unixPath(contextDir.relativize(p))))
                    .toList();
            byte[] buffer = new byte[64 * 1024];
            for (Path file : files) {
                digest.update(unixPath(contextDir.relativize(file)).getBytes(StandardCharsets.UTF_8));
                digest.update((byte) 0);
                if (Files.isSymbolicLink(file)) {
                    digest.update((byte) 'l');
                    digest.update(Files.readSymbolicLink(file).toString().getBytes(StandardCharsets.UTF_8));
                } else {
                    digest.update((byte) (Files.isExecutable(file) ? 'x' : 'f'));
                    digest.update(ByteBuffer.allocate(8).putLong(Files.size(file)).array());
                    try (InputStream in = Files.newInputStream(file)) {
                        for (int n; (n = in.read(buffer)) > 0; ) {
                            digest.update(buffer, 0, n);
                        }
                    }
                }
                digest.update((byte) 0);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the build context " + contextDir, e);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /**
     * Checks that a binary is a statically linked ELF file: it must run in a {@code FROM scratch} image,
     * which has no dynamic loader. An ELF without a PT_INTERP program header needs none.
     */
    static void requireStaticBusybox(Path binary) {
        String fix = " A FROM-scratch test image needs a statically linked busybox: apt-get install busybox-static"
                + " (or point -D" + BUSYBOX_PROPERTY + " at one).";
        if (!Files.isRegularFile(binary)) {
            throw new IllegalStateException("no busybox at " + binary + "." + fix);
        }
        try (FileChannel ch = FileChannel.open(binary, StandardOpenOption.READ)) {
            ByteBuffer ident = ByteBuffer.allocate(64);
            ch.read(ident, 0);
            ident.flip();
            if (ident.remaining() < 52 || ident.getInt(0) != 0x7F454C46) {
                throw new IllegalStateException(binary + " is not an ELF executable." + fix);
            }
            boolean is64 = ident.get(4) == 2;
            ident.order(ident.get(5) == 2 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
            long phoff = is64 ? ident.getLong(0x20) : Integer.toUnsignedLong(ident.getInt(0x1C));
            int phentsize = Short.toUnsignedInt(ident.getShort(is64 ? 0x36 : 0x2A));
            int phnum = Short.toUnsignedInt(ident.getShort(is64 ? 0x38 : 0x2C));
            ByteBuffer entry = ByteBuffer.allocate(4).order(ident.order());
            for (int i = 0; i < phnum; i++) {
                entry.clear();
                ch.read(entry, phoff + (long) i * phentsize);
                if (entry.getInt(0) == 3) { // PT_INTERP: asks for a dynamic loader
                    throw new IllegalStateException(binary + " is dynamically linked." + fix);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + binary, e);
        }
    }

    private static void requireDockerJava() {
        try {
            Class.forName("com.github.dockerjava.core.DockerClientImpl", false, TestImages.class.getClassLoader());
            Class.forName("com.github.dockerjava.zerodep.ZerodepDockerHttpClient", false, TestImages.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("TestImages builds images through docker-java, an optional dependency of "
                    + "sandbox-testkit: add com.github.docker-java:docker-java-core and docker-java-transport-zerodep "
                    + "to the test classpath (dev.sandboxkit:sandbox-docker brings both)", e);
        }
    }

    private static String unixPath(Path relative) {
        return relative.toString().replace('\\', '/');
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }

    private static void deleteQuietly(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | RuntimeException ignored) {
            // A leftover temporary build context is harmless.
        }
    }
}
