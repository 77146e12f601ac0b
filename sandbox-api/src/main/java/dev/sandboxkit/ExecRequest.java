package dev.sandboxkit;

import org.jspecify.annotations.Nullable;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One command to run in a sandbox. Immutable; the {@code with*} methods return copies.
 *
 * <p>Per-exec {@link #env()} is passed to this process only and never persisted in the container:
 * use it for secrets. Output beyond {@link #stdoutLimit()} / {@link #stderrLimit()} is dropped from
 * the result (which is then marked truncated) but still reaches the {@link #listener()}.
 *
 * <p>Built from {@link #of(String...)} or {@link #shell(String)} and the {@code with*} methods; a final class
 * rather than a record, so that it can gain options without breaking callers.
 */
public final class ExecRequest {
    private final List<String> command;
    private final Map<String, String> env;
    private final @Nullable String workingDir;
    private final byte @Nullable [] stdin;
    private final @Nullable Duration timeout;
    private final int stdoutLimit;
    private final int stderrLimit;
    private final @Nullable OutputListener listener;
    private final @Nullable TerminalSize tty;

    private ExecRequest(List<String> command, @Nullable Map<String, String> env, @Nullable String workingDir,
                        byte @Nullable [] stdin, @Nullable Duration timeout, int stdoutLimit, int stderrLimit,
                        @Nullable OutputListener listener, @Nullable TerminalSize tty) {
        Objects.requireNonNull(command, "command");
        if (command.isEmpty()) {
            throw new IllegalArgumentException("command must not be empty");
        }
        command = List.copyOf(command);
        for (String arg : command) {
            if (arg.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("command arguments must not contain NUL");
            }
        }
        env = SandboxSpec.copyEnv(env);
        workingDir = normalizeWorkingDir(workingDir);
        stdin = stdin == null ? null : stdin.clone();
        if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
            throw new IllegalArgumentException("timeout must be positive, got: " + timeout);
        }
        if (stdoutLimit < 0 || stderrLimit < 0) {
            throw new IllegalArgumentException("output limits must be >= 0");
        }
        this.command = command;
        this.env = env;
        this.workingDir = workingDir;
        this.stdin = stdin;
        this.timeout = timeout;
        this.stdoutLimit = stdoutLimit;
        this.stderrLimit = stderrLimit;
        this.listener = listener;
        this.tty = tty;
    }

    /**
     * Argv; {@link #shell(String)} wraps a script in {@code /bin/sh -c}.
     *
     * @return argv; {@link #shell(String)} wraps a script in {@code /bin/sh -c}
     */
    public List<String> command() {
        return command;
    }

    /**
     * Environment for this exec only, on top of the spec's env.
     *
     * @return environment for this exec only, on top of the spec's env
     */
    public Map<String, String> env() {
        return env;
    }

    /**
     * Absolute path inside {@value SandboxSpec#WORKSPACE}; {@code null} means the workspace itself.
     *
     * @return absolute path inside {@value SandboxSpec#WORKSPACE}; {@code null} means the workspace itself
     */
    public @Nullable String workingDir() {
        return workingDir;
    }

    /**
     * Kill the process after this long; {@code null} for no limit.
     *
     * @return kill the process after this long; {@code null} for no limit
     */
    public @Nullable Duration timeout() {
        return timeout;
    }

    /**
     * Maximum stdout bytes kept in the result.
     *
     * @return maximum stdout bytes kept in the result
     */
    public int stdoutLimit() {
        return stdoutLimit;
    }

    /**
     * Maximum stderr bytes kept in the result.
     *
     * @return maximum stderr bytes kept in the result
     */
    public int stderrLimit() {
        return stderrLimit;
    }

    /**
     * Receives output as it arrives, or {@code null}.
     *
     * @return receives output as it arrives, or {@code null}
     */
    public @Nullable OutputListener listener() {
        return listener;
    }


    /**
     * The terminal this command runs on, or {@code null} for none (separate stdout and stderr pipes).
     *
     * @return the pseudo-terminal's initial size, or {@code null}
     */
    public @Nullable TerminalSize tty() {
        return tty;
    }

    /** Default cap on each output stream kept in the result: 1 MiB. */
    public static final int DEFAULT_OUTPUT_LIMIT = 1024 * 1024;

    /**
     * Runs a program with arguments, without a shell.
     *
     * @param argv program and arguments
     * @return the request
     */
    public static ExecRequest of(String... argv) {
        return of(Arrays.asList(argv));
    }

    /**
     * Runs a program with arguments, without a shell.
     *
     * @param argv program and arguments
     * @return the request
     */
    public static ExecRequest of(List<String> argv) {
        return new ExecRequest(argv, Map.of(), null, null, null, DEFAULT_OUTPUT_LIMIT, DEFAULT_OUTPUT_LIMIT, null, null);
    }

    /**
     * Runs a script with {@code /bin/sh -c}.
     *
     * @param script shell script
     * @return the request
     */
    public static ExecRequest shell(String script) {
        return of("/bin/sh", "-c", Objects.requireNonNull(script, "script"));
    }

    /**
     * Returns a copy with one more environment variable for this exec only.
     *
     * @param name  variable name
     * @param value variable value
     * @return the new request
     */
    public ExecRequest withEnv(String name, String value) {
        Map<String, String> merged = new HashMap<>(env);
        merged.put(name, value);
        return withEnv(merged);
    }

    /**
     * Returns a copy with this exec's environment replaced.
     *
     * @param variables name to value
     * @return the new request
     */
    public ExecRequest withEnv(Map<String, String> variables) {
        return new ExecRequest(command, variables, workingDir, stdin, timeout, stdoutLimit, stderrLimit, listener, tty);
    }

    /**
     * Returns a copy running in another directory inside the workspace.
     *
     * @param dir absolute path under {@value SandboxSpec#WORKSPACE}, or a path relative to it
     * @return the new request
     */
    public ExecRequest withWorkingDir(@Nullable String dir) {
        return new ExecRequest(command, env, dir, stdin, timeout, stdoutLimit, stderrLimit, listener, tty);
    }

    /**
     * Returns a copy that writes these bytes to stdin, then closes it.
     *
     * @param bytes stdin content
     * @return the new request
     */
    public ExecRequest withStdin(byte @Nullable [] bytes) {
        return new ExecRequest(command, env, workingDir, bytes, timeout, stdoutLimit, stderrLimit, listener, tty);
    }

    /**
     * Returns a copy that writes this UTF-8 text to stdin, then closes it.
     *
     * @param text stdin content
     * @return the new request
     */
    public ExecRequest withStdin(String text) {
        return withStdin(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Returns a copy with a timeout after which the process (and its process group) is killed.
     *
     * @param limit timeout
     * @return the new request
     */
    public ExecRequest withTimeout(@Nullable Duration limit) {
        return new ExecRequest(command, env, workingDir, stdin, limit, stdoutLimit, stderrLimit, listener, tty);
    }

    /**
     * Returns a copy with the same cap on stdout and stderr.
     *
     * @param bytes cap on each stream
     * @return the new request
     */
    public ExecRequest withOutputLimit(int bytes) {
        return new ExecRequest(command, env, workingDir, stdin, timeout, bytes, bytes, listener, tty);
    }

    /**
     * Returns a copy with a cap on stdout kept in the result.
     *
     * @param bytes cap
     * @return the new request
     */
    public ExecRequest withStdoutLimit(int bytes) {
        return new ExecRequest(command, env, workingDir, stdin, timeout, bytes, stderrLimit, listener, tty);
    }

    /**
     * Returns a copy with a cap on stderr kept in the result.
     *
     * @param bytes cap
     * @return the new request
     */
    public ExecRequest withStderrLimit(int bytes) {
        return new ExecRequest(command, env, workingDir, stdin, timeout, stdoutLimit, bytes, listener, tty);
    }

    /**
     * Returns a copy that streams output to a listener.
     *
     * @param outputListener the listener; see {@link OutputListener} for threading
     * @return the new request
     */
    public ExecRequest withListener(@Nullable OutputListener outputListener) {
        return new ExecRequest(command, env, workingDir, stdin, timeout, stdoutLimit, stderrLimit, outputListener, tty);
    }

    /**
     * Returns a copy that runs on a pseudo-terminal (PTY) of this size, as an interactive program expects: the
     * program sees a terminal on stdin, stdout and stderr ({@code tty} prints {@code /dev/pts/N}), and its
     * output arrives merged on stdout, with the terminal's line endings ({@code \r\n}), and capped by
     * {@link #stdoutLimit()}; stderr stays empty. {@link #stdin()} bytes are typed at the terminal: they are
     * echoed, and the terminal never sees an end of file (a program reading to EOF needs a Ctrl-D, {@code 0x04},
     * at the start of a line). The exec counts and ends as any other: exit code, timeout, kill on destroy.
     * For a terminal that stays open for input, resize and output as it comes, pass the request to
     * {@link Sandbox#terminal(ExecRequest)}; for one that outlives the caller and can be reattached, to
     * {@link Sandbox#start(ExecRequest, ProcessOptions)}. Drivers declare support for exec terminals with
     * {@link dev.sandboxkit.spi.ComputeCapability#TTY}.
     *
     * @param size the terminal's size, or {@code null} for no terminal
     * @return the new request
     */
    public ExecRequest withTty(@Nullable TerminalSize size) {
        return new ExecRequest(command, env, workingDir, stdin, timeout, stdoutLimit, stderrLimit, listener, size);
    }

    /**
     * The stdin bytes, copied.
     *
     * @return stdin content, or {@code null}
     */
    public byte @Nullable [] stdin() {
        return stdin == null ? null : stdin.clone();
    }

    /**
     * The number of stdin bytes, without copying them.
     *
     * @return length, or {@code -1} when there is no stdin
     */
    public int stdinLength() {
        return stdin == null ? -1 : stdin.length;
    }

    /**
     * The working directory the process starts in.
     *
     * @return an absolute path inside the workspace
     */
    public String effectiveWorkingDir() {
        return workingDir == null ? SandboxSpec.WORKSPACE : workingDir;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ExecRequest r && command.equals(r.command) && env.equals(r.env)
                && Objects.equals(workingDir, r.workingDir) && Arrays.equals(stdin, r.stdin)
                && Objects.equals(timeout, r.timeout) && stdoutLimit == r.stdoutLimit
                && stderrLimit == r.stderrLimit && Objects.equals(listener, r.listener) && Objects.equals(tty, r.tty);
    }

    @Override
    public int hashCode() {
        return Objects.hash(command, env, workingDir, Arrays.hashCode(stdin), timeout, stdoutLimit, stderrLimit, tty);
    }

    /** Leaves out env values, which may be secrets. */
    @Override
    public String toString() {
        return "ExecRequest[command=" + command + ", env=" + env.keySet() + ", workingDir=" + workingDir
                + ", stdin=" + (stdin == null ? "none" : stdin.length + " bytes") + ", timeout=" + timeout
                + (tty == null ? "" : ", tty=" + tty) + "]";
    }

    private static @Nullable String normalizeWorkingDir(@Nullable String dir) {
        if (dir == null || dir.isEmpty()) {
            return null;
        }
        if (dir.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("workingDir must not contain NUL");
        }
        String path = dir.startsWith("/") ? dir : SandboxSpec.WORKSPACE + "/" + dir;
        StringBuilder out = new StringBuilder();
        for (String part : path.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                throw new IllegalArgumentException("workingDir must not contain '..': " + dir);
            }
            out.append('/').append(part);
        }
        String normalized = out.toString();
        if (!normalized.equals(SandboxSpec.WORKSPACE) && !normalized.startsWith(SandboxSpec.WORKSPACE + "/")) {
            throw new IllegalArgumentException("workingDir must be inside " + SandboxSpec.WORKSPACE + ": " + dir);
        }
        return normalized;
    }
}
