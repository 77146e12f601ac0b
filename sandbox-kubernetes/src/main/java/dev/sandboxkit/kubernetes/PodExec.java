package dev.sandboxkit.kubernetes;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.ExecResult.Termination;
import dev.sandboxkit.ExecStream;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.ContainerResource;
import io.fabric8.kubernetes.client.dsl.ExecListener;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.dsl.TtyExecErrorable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Runs one exec over the pod exec API (a websocket, {@code v4.channel.k8s.io}) through the wrapper in
 * {@link ExecScripts}. The calling thread waits; output arrives on fabric8's threads; stdin is written
 * by a driver thread so that a timeout fires even while the process is not reading.
 */
final class PodExec {
    /** How long the kill exec may take. */
    static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
    /** How long to wait for the exit status after the kill. */
    static final Duration AFTER_KILL = Duration.ofSeconds(3);
    private static final Logger log = LoggerFactory.getLogger(PodExec.class);

    private final KubernetesClient client;
    private final String namespace;
    private final ExecutorService stdinWriters;
    private final Supplier<String> execIds;

    PodExec(KubernetesClient client, String namespace, ExecutorService stdinWriters, Supplier<String> execIds) {
        this.client = client;
        this.namespace = namespace;
        this.stdinWriters = stdinWriters;
        this.execIds = execIds;
    }

    /** Opens a command on a terminal (see {@link PodTerminal}). */
    PodTerminal terminal(String podName, ExecRequest request) {
        return PodTerminal.open(client, this, namespace, podName, execIds.get(), request);
    }

    ExecResult run(String podName, ExecRequest request) {
        if (request.tty() != null) {
            return PodTerminal.run(terminal(podName, request), request);
        }
        long started = System.nanoTime();
        String execId = execIds.get();
        byte[] header = ExecScripts.envHeader(request.env());
        byte[] stdin = request.stdin();
        boolean input = header.length > 0 || stdin != null;
        List<String> argv = ExecScripts.wrap(request.effectiveWorkingDir(), execId, request.env().size(),
                stdin == null ? -1 : stdin.length, request.command());

        CompletableFuture<RuntimeException> listenerFailure = new CompletableFuture<>();
        OutputCapture out = new OutputCapture(ExecStream.STDOUT, request.stdoutLimit(), request.listener(), listenerFailure);
        OutputCapture err = new OutputCapture(ExecStream.STDERR, request.stderrLimit(), request.listener(), listenerFailure);
        StatusListener status = new StatusListener();

        ExecWatch watch = open(podName, argv, input, out, err, status);
        try {
            if (input) {
                byte[] payload = concat(header, stdin);
                stdinWriters.execute(() -> writeInput(watch, payload, podName));
            }
            CompletableFuture<Integer> exit = watch.exitCode();
            CompletableFuture<Object> finished = CompletableFuture.anyOf(exit, listenerFailure);
            boolean timedOut = false;
            try {
                if (request.timeout() == null) {
                    finished.get();
                } else {
                    long remaining = request.timeout().toNanos() - (System.nanoTime() - started);
                    finished.get(Math.max(0, remaining), TimeUnit.NANOSECONDS);
                }
            } catch (TimeoutException e) {
                timedOut = true;
            } catch (InterruptedException e) {
                kill(podName, execId);
                Thread.currentThread().interrupt();
                throw new SandboxExecException("interrupted while running a command in pod " + podName
                        + "; the process was killed", e);
            } catch (ExecutionException e) {
                // handled below from the future's state
            }
            if (listenerFailure.isDone()) {
                kill(podName, execId);
                throw new SandboxExecException("the output listener threw; the process in pod " + podName
                        + " was killed", listenerFailure.join());
            }
            if (timedOut) {
                kill(podName, execId);
                Integer code = null;
                try {
                    code = exit.get(AFTER_KILL.toMillis(), TimeUnit.MILLISECONDS);
                } catch (TimeoutException | ExecutionException e) {
                    log.debug("No exit status for timed-out exec {} in pod {}: {}", execId, podName, e.toString());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                int reported = code == null || code < 0 ? -1 : code;
                return result(reported, out, err, Termination.TIMED_OUT, started);
            }
            return finish(podName, exit, status, out, err, started);
        } finally {
            watch.close();
        }
    }

    private ExecWatch open(String podName, List<String> argv, boolean input, OutputCapture out, OutputCapture err,
                           StatusListener status) {
        try {
            ContainerResource container = client.pods().inNamespace(namespace).withName(podName)
                    .inContainer(Manifests.CONTAINER);
            TtyExecErrorable step = input ? container.redirectingInput().writingOutput(out) : container.writingOutput(out);
            return step.writingError(err).usingListener(status).exec(argv.toArray(String[]::new));
        } catch (KubernetesClientException e) {
            throw startFailure(podName, e);
        }
    }

    /** The exec could not even start: a missing pod is NotFound (the engine then resumes the session). */
    RuntimeException startFailure(String podName, KubernetesClientException e) {
        int code = e.getCode();
        String message = Errors.message(e);
        String lower = message.toLowerCase(Locale.ROOT);
        if (code == 404 || lower.contains("not found")) {
            if (podDeadOrDying(podName)) {
                return new SandboxNotFoundException("pod " + namespace + "/" + podName + " does not exist (any more): "
                        + message, e);
            }
        }
        if (podDeadOrDying(podName)) {
            return new SandboxNotFoundException("pod " + namespace + "/" + podName + " is gone or not running: "
                    + message, e);
        }
        return Errors.translate(e, "exec in pods/" + podName, String.valueOf(client.getMasterUrl()),
                new SandboxExecException("could not start an exec in pod " + namespace + "/" + podName + ": "
                        + message, e));
    }

    /** Normal end: an exit code, or a stream that ended without one. */
    private ExecResult finish(String podName, CompletableFuture<Integer> exit, StatusListener status,
                              OutputCapture out, OutputCapture err, long started) {
        Integer code;
        Throwable failure = null;
        try {
            code = exit.join();
        } catch (CompletionException | java.util.concurrent.CancellationException e) {
            code = null;
            failure = e.getCause() != null ? e.getCause() : e;
        }
        if (code != null && code >= 0 && code < 128) {
            return result(code, out, err, Termination.EXITED, started);
        }
        log.debug("Exec in pod {} ended with code {} ({}); checking the pod", podName, code,
                failure != null ? failure.toString() : "no failure");
        // 128+ may be a signal from the pod's deletion; no code at all usually is.
        if (podDeadOrDying(podName)) {
            return result(code != null && code >= 0 ? code : 137, out, err, Termination.KILLED, started);
        }
        if (code != null && code >= 0) {
            return result(code, out, err, Termination.EXITED, started);
        }
        Status s = status.status;
        String why = s != null && s.getMessage() != null ? s.getMessage()
                : failure != null ? failure.toString() : "the stream closed without an exit status";
        if (why.contains("/bin/sh") || why.toLowerCase(Locale.ROOT).contains("no such file or directory")) {
            throw new SandboxExecException("exec in pod " + namespace + "/" + podName + " failed: " + why
                    + ". The Kubernetes driver needs /bin/sh in the image (per-exec env, working directory and "
                    + "stdin EOF are implemented with a small POSIX shell wrapper)", failure);
        }
        if (failure instanceof KubernetesClientException k && Errors.isUnreachable(k)) {
            throw Errors.translate(k, "exec in pods/" + podName, String.valueOf(client.getMasterUrl()), null);
        }
        throw new SandboxExecException("exec in pod " + namespace + "/" + podName + " failed: " + why, failure);
    }

    private boolean podDeadOrDying(String podName) {
        try {
            Pod pod = client.pods().inNamespace(namespace).withName(podName).get();
            return PodStartup.isDeadOrDying(pod);
        } catch (KubernetesClientException e) {
            return false;
        }
    }

    private static void writeInput(ExecWatch watch, byte[] payload, String podName) {
        try {
            OutputStream in = watch.getInput();
            if (payload.length > 0) {
                in.write(payload);
            }
            in.flush();
        } catch (Exception e) {
            // The exec ended (timeout, kill, pod gone) before all input went out; its outcome says why.
            log.debug("stdin for an exec in pod {} not fully sent: {}", podName, e.toString());
        }
    }

    /** Runs the kill script in the pod; failures are logged, never thrown (the pod may be gone). */
    void kill(String podName, String execId) {
        ByteArrayOutputStream sink = new ByteArrayOutputStream();
        try (ExecWatch w = client.pods().inNamespace(namespace).withName(podName).inContainer(Manifests.CONTAINER)
                .writingOutput(sink).writingError(sink).exec(ExecScripts.kill(execId))) {
            Integer code = w.exitCode().get(KILL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            log.debug("Kill exec for {} in pod {} exited {}: {}", execId, podName, code, sink.toString().trim());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("Could not kill exec {} in pod {}/{}: {}", execId, namespace, podName, e.toString());
        }
    }

    private static ExecResult result(int code, OutputCapture out, OutputCapture err, Termination termination,
                                     long started) {
        return ExecResult.builder().exitCode(code).stdoutBytes(out.bytes()).stderrBytes(err.bytes())
                .stdoutTruncated(out.truncated()).stderrTruncated(err.truncated()).termination(termination)
                .duration(Duration.ofNanos(System.nanoTime() - started)).build();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        if (b == null || b.length == 0) {
            return a;
        }
        byte[] all = new byte[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    /** Keeps the Status the API server sent on the error channel, for messages. */
    private static final class StatusListener implements ExecListener {
        volatile Status status;

        @Override
        public void onExit(int code, Status s) {
            this.status = s;
        }

        @Override
        public void onClose(int code, String reason) {
            // nothing: the exit future completes with null when no status came
        }
    }
}
