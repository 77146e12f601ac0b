package dev.sandboxkit.testkit.tck;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;

import java.util.List;

/**
 * What a driver author extends in every conformance kit ({@link ComputeDriverTck}, {@link WorkspaceBackendTck}): the
 * one factory method, the spec the sandboxes start from, and the two commands a driver without a shell may script.
 * Package-private: its members show as the kits' own.
 */
abstract class DriverKit {
    /** System property naming the image the kit runs; the sandboxes need only a POSIX shell. */
    public static final String IMAGE_PROPERTY = "sandboxkit.test.image";
    /** The image used when {@value #IMAGE_PROPERTY} is not set: built by {@code scripts/build-test-images.sh}. */
    public static final String DEFAULT_IMAGE = "sandboxkit-test:latest";

    private static final String WRITE_SCRIPT = "printf '%s' \"$1\" > \"$2\"";

    DriverKit() {
    }

    /**
     * Creates the driver under test. Called once per test, on the test thread, before the test runs;
     * the kit closes the driver after the test.
     *
     * @param context the settings a manager would give the driver: a fresh owner instance id, a
     *                temporary workspace root, the system clock and no properties
     * @return a new driver
     */
    protected abstract SandboxDriver createDriver(DriverContext context);

    /**
     * The spec sandboxes are started from. Default: the image from the system property
     * {@value #IMAGE_PROPERTY} (else {@value #DEFAULT_IMAGE}), never pulled, hardened defaults otherwise.
     * Called on the test thread.
     *
     * @return the spec
     */
    protected SandboxSpec spec() {
        return SandboxSpec.builder()
                .image(System.getProperty(IMAGE_PROPERTY, DEFAULT_IMAGE))
                .pullPolicy(PullPolicy.NEVER)
                .build();
    }

    /**
     * The command the kit runs to write a text file in the workdir: {@code printf '%s' "$1" > "$2"} under
     * {@code /bin/sh}. Drivers without a shell (fakes) may script an answer to exactly this command.
     *
     * @param path    path relative to the working directory
     * @param content file content
     * @return the request
     */
    protected static ExecRequest writeFileRequest(String path, String content) {
        return ExecRequest.of("/bin/sh", "-c", WRITE_SCRIPT, "sh", content, path);
    }

    /**
     * Whether an exec is the kit's write-file command, for drivers that script it.
     *
     * @param command the exec's argv
     * @return {@code true} if it is {@link #writeFileRequest}'s command; then argv[4] is the content and argv[5] the path
     */
    protected static boolean isWriteFileCommand(List<String> command) {
        return command.size() == 6 && command.get(0).equals("/bin/sh") && command.get(2).equals(WRITE_SCRIPT);
    }

    /**
     * The command the kit runs to read a file in the workdir: {@code cat path}. A missing file must give a
     * non-zero exit code.
     *
     * @param path path relative to the working directory
     * @return the request
     */
    protected static ExecRequest readFileRequest(String path) {
        return ExecRequest.of("cat", path);
    }
}
