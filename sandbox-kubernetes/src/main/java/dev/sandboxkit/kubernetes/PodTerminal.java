package dev.sandboxkit.kubernetes;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxUnsupportedException;
import dev.sandboxkit.TerminalSize;
import dev.sandboxkit.spi.TerminalConnection;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A command on a terminal through the pod exec API with {@code tty=true}: stdin and stdout on their channels
 * (a terminal merges stderr into stdout, and the API refuses {@code stderr} beside {@code tty}), the size on the
 * resize channel (4) right after the start, and from inside before the command runs ({@link ExecScripts#TTY_WRAPPER},
 * since a quick command can read the size before the first resize arrives). fabric8's threads move the bytes, as
 * for every exec of this driver; the driver starts none for a terminal. The request's timeout is enforced by
 * {@link #waitFor}. Per-exec env is not supported on a terminal: the wrapper gets it over stdin, which on a
 * terminal would be echoed (a secret on the screen).
 */
final class PodTerminal implements TerminalConnection {
    private static final Logger log = LoggerFactory.getLogger(PodTerminal.class);
    private static final Duration MAX_WAIT = Duration.ofDays(36_500);

    private final KubernetesClient client;
    private final PodExec execs;
    private final String namespace;
    private final String podName;
    private final String execId;
    private final long started = System.nanoTime();
    private final long deadline;
    private final ExecWatch watch;
    private volatile boolean timedOut;
    private volatile boolean closedHere;
    private volatile ExecResult status;

    private PodTerminal(KubernetesClient client, PodExec execs, String namespace, String podName, String execId,
                        ExecRequest request, ExecWatch watch) {
        this.client = client;
        this.execs = execs;
        this.namespace = namespace;
        this.podName = podName;
        this.execId = execId;
        this.watch = watch;
        Duration timeout = request.timeout();
        this.deadline = timeout == null || timeout.compareTo(MAX_WAIT) > 0 ? Long.MAX_VALUE
                : started + timeout.toNanos();
    }

    /** Opens the exec with a terminal, sizes it and types the request's stdin, if any. */
    static PodTerminal open(KubernetesClient client, PodExec execs, String namespace, String podName, String execId,
                            ExecRequest request) {
        TerminalSize size = Objects.requireNonNull(request.tty(), "tty");
        if (!request.env().isEmpty()) {
            throw new SandboxUnsupportedException("the Kubernetes driver cannot pass per-exec env to a command on a "
                    + "terminal (it travels on stdin, which a terminal echoes); set it in the spec's image or script "
                    + "instead: " + request.env().keySet());
        }
        List<String> argv = ExecScripts.wrapTty(request.effectiveWorkingDir(), execId, size.columns(), size.rows(),
                request.command());
        ExecWatch watch;
        try {
            watch = client.pods().inNamespace(namespace).withName(podName).inContainer(Manifests.CONTAINER)
                    .redirectingInput().redirectingOutput().withTTY().exec(argv.toArray(String[]::new));
        } catch (KubernetesClientException e) {
            throw execs.startFailure(podName, e);
        }
        PodTerminal t = new PodTerminal(client, execs, namespace, podName, execId, request, watch);
        try {
            watch.resize(size.columns(), size.rows());
            byte[] stdin = request.stdin();
            if (stdin != null && stdin.length > 0) {
                watch.getInput().write(stdin);
                watch.getInput().flush();
            }
        } catch (IOException | RuntimeException e) {
            log.debug("Setting up the terminal of exec {} in pod {}: {}", execId, podName, e.toString());
        }
        return t;
    }

    @Override
    public OutputStream input() {
        return watch.getInput();
    }

    @Override
    public InputStream output() {
        return watch.getOutput();
    }

    @Override
    public void resize(TerminalSize size) {
        Objects.requireNonNull(size, "size");
        if (status == null) {
            watch.resize(size.columns(), size.rows());
        }
    }

    @Override
    public Optional<ExecResult> waitFor(Duration timeout) {
        ExecResult known = status;
        if (known != null) {
            return Optional.of(known);
        }
        long until = System.nanoTime() + (timeout.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : timeout).toNanos();
        while (true) {
            boolean deadlineFirst = deadline != Long.MAX_VALUE && !timedOut && deadline - until < 0;
            long wait = Math.max(0, (deadlineFirst ? deadline : until) - System.nanoTime());
            Integer code;
            try {
                code = watch.exitCode().get(wait, TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                if (deadlineFirst) {
                    timedOut = true;
                    execs.kill(podName, execId);
                    continue;
                }
                return Optional.empty();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SandboxExecException("interrupted while waiting for the terminal in pod " + podName, e);
            } catch (ExecutionException | java.util.concurrent.CancellationException e) {
                code = null;
            }
            return Optional.of(end(code));
        }
    }

    private synchronized ExecResult end(Integer code) {
        if (status == null) {
            Termination how;
            int exit = code == null || code < 0 ? -1 : code;
            if (timedOut) {
                how = Termination.TIMED_OUT;
            } else if ((code == null || code < 0 || code >= 128) && podGone()) {
                how = Termination.KILLED;
                exit = exit < 0 ? 137 : exit;
            } else {
                how = closedHere ? Termination.KILLED : Termination.EXITED;
            }
            status = ExecResult.builder().exitCode(exit).termination(how)
                    .duration(Duration.ofNanos(System.nanoTime() - started)).build();
        }
        return status;
    }

    private boolean podGone() {
        try {
            Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
            return PodStartup.isDeadOrDying(pod);
        } catch (KubernetesClientException e) {
            return false;
        }
    }

    @Override
    public void close() {
        try {
            if (status == null && !watch.exitCode().isDone()) {
                closedHere = true;
                execs.kill(podName, execId);
            }
        } finally {
            watch.close();
        }
    }

    /**
     * Runs an exec with {@code withTty} as a terminal read to its end on the calling thread: the output merged on
     * stdout (capped), the stdin typed, the timeout enforced.
     */
    static ExecResult run(PodTerminal t, ExecRequest request) {
        ByteArrayOutputStream kept = new ByteArrayOutputStream();
        boolean truncated = false;
        try (t) {
            byte[] buffer = new byte[8192];
            InputStream in = t.output();
            while (System.nanoTime() - t.deadline < 0) {
                int n = in.read(buffer);
                if (n < 0) {
                    break;
                }
                int keep = Math.min(n, request.stdoutLimit() - kept.size());
                truncated |= keep < n;
                kept.write(buffer, 0, Math.max(0, keep));
                if (request.listener() != null && n > 0) {
                    request.listener().onOutput(dev.sandboxkit.ExecStream.STDOUT, buffer, 0, n);
                }
            }
        } catch (IOException e) {
            log.debug("Terminal output of exec {} in pod {} ended: {}", t.execId, t.podName, e.toString());
        }
        ExecResult s = t.waitFor(Duration.ofSeconds(30)).orElseGet(() -> t.end(null));
        return ExecResult.builder().exitCode(s.exitCode()).termination(s.termination()).stdoutBytes(kept.toByteArray())
                .stdoutTruncated(truncated).duration(s.duration()).build();
    }
}
