package dev.sandboxkit.docker.internal.engine;

import java.util.List;
import java.util.Locale;

/**
 * How the driver reads an engine's refusal: by HTTP status first (404 not found, 409 conflict, from
 * {@link EngineClient.Response#status()}), and by
 * text only where the engine gives nothing finer: a 409 that may mean "not running" or "another removal is under
 * way", a 404 on create that may be the image or something else, a runtime's start failure relayed as a 500 or
 * inside the exec stream. Every text pattern the driver matches lives in this one table, with the engines whose
 * wording it covers; {@code EngineErrorsOnEnginesTest} provokes each classified case on runc, runsc and Podman.
 *
 * <p>Not API. Patterns are lower case and matched against the lower-cased message.
 */
public final class EngineErrors {
    /** A 409 on exec create or start: the container is stopped (Docker: "Container x is not running"). */
    static final List<String> NOT_RUNNING = List.of("not running");
    /**
     * An exec refused because its container is stopping or gone (runc 1.x,
     * containerd 1.x, dockerd 20-28, Podman 4).
     */
    static final List<String> REMOVAL = List.of("is not running", "removal in progress",
            "no such container", "stopped state", "deleted state", "stopped container", "setns process",
            "init-p", "container not found", "is paused", "cannot exec in a", "namespace path",
            "container state improper", "no such exec session");
    /**
     * A runtime refused to start the command itself: missing or non-executable program, working directory, an
     * argument list too long for the kernel or for containerd's 4 MiB messages. runc says {@code exec: "x": ...};
     * gVisor says {@code failed to load x} or {@code error finding executable "x"}.
     */
    static final List<String> COMMAND = List.of("exec: \"", "executable file not found", "chdir to cwd",
            "failed to load ", "error finding executable", "failed to find initial working directory",
            "argument list too long", "exceed maximum message size");
    /** Of the command failures, those naming the binary (not the working directory). */
    static final List<String> ABOUT_THE_BINARY = List.of("failed to load ", "error finding executable");
    /** ... and among those, the ones where it does not exist (ENOENT, or ENOTDIR on its path): exit code 127. */
    static final List<String> MISSING = List.of("no such file or directory", "not a directory");
    /** A 404 on container create about the image (Docker "No such image", Podman "... image not known"). */
    static final List<String> NO_SUCH_IMAGE = List.of("no such image", "image not known");
    /** A create refused over its runtime (Docker 400 "unknown or invalid runtime name"). */
    static final List<String> RUNTIME = List.of("runtime");
    /** A 409 on remove: another removal of the same container is under way (Docker). */
    static final List<String> REMOVAL_IN_PROGRESS = List.of("already in progress");
    /** Podman runs init with catatonit, a package of its own: its absence fails create or start. */
    static final List<String> INIT_MISSING = List.of("container-init binary", "catatonit");

    private EngineErrors() {
    }

    /**
     * Whether an exec create or start answer says the container is not running.
     *
     * @param status  the HTTP status
     * @param message the engine's {@code message}
     * @return whether it is a 409 about a stopped container
     */
    public static boolean notRunning(int status, String message) {
        return status == 409 && any(message, NOT_RUNNING);
    }

    /**
     * Whether an engine or runtime message reads like an exec refused because its container is stopping or gone
     * rather than because of the command.
     *
     * @param message the engine's or runtime's message
     * @return whether the text speaks of the container's removal or stop
     */
    public static boolean removal(String message) {
        return any(message, REMOVAL);
    }

    /**
     * Whether a runtime start failure is about the command itself rather than about the container.
     *
     * @param message the engine's or runtime's message
     * @return whether the command, not the container, is at fault
     */
    public static boolean commandFailure(String message) {
        return !removal(message) && any(message, COMMAND);
    }

    /**
     * The exit code a shell gives for a command that cannot start: 127 when the binary does not exist, 126
     * otherwise (not executable, a directory on its path that cannot be searched, bad working directory, ...).
     *
     * @param message the runtime's message
     * @return 127 or 126
     */
    public static int startFailureExitCode(String message) {
        String m = lower(message);
        boolean aboutTheBinary = (m.contains("exec: \"") && !m.contains("chdir")) || any(m, ABOUT_THE_BINARY);
        boolean missing = m.contains("executable file not found") || (aboutTheBinary && any(m, MISSING));
        return missing ? 127 : 126;
    }

    /**
     * Whether a 404 on container create is about the image.
     *
     * @param status  the HTTP status
     * @param message the engine's message
     * @return whether the image is missing
     */
    public static boolean noSuchImage(int status, String message) {
        return status == 404 && any(message, NO_SUCH_IMAGE);
    }

    /**
     * Whether a refused create is about its runtime.
     *
     * @param message the engine's message
     * @return whether the runtime is named
     */
    public static boolean aboutRuntime(String message) {
        return any(message, RUNTIME);
    }

    /**
     * Whether a refused remove is a 409 because another removal of it is under way.
     *
     * @param status  the HTTP status
     * @param message the engine's message
     * @return whether to wait and remove again
     */
    public static boolean removalInProgress(int status, String message) {
        return status == 409 && any(message, REMOVAL_IN_PROGRESS);
    }

    /**
     * Whether a refused create or start is about Podman's missing init binary.
     *
     * @param message the engine's message
     * @return whether catatonit is missing
     */
    public static boolean initMissing(String message) {
        return any(message, INIT_MISSING);
    }

    private static boolean any(String message, List<String> patterns) {
        String m = lower(message);
        for (String p : patterns) {
            if (m.contains(p)) {
                return true;
            }
        }
        return false;
    }

    private static String lower(String message) {
        return message == null ? "" : message.toLowerCase(Locale.ROOT);
    }
}
