package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.docker.internal.engine.EngineExec.Run;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.sandboxkit.docker.internal.engine.EngineClient.segment;
import static dev.sandboxkit.docker.internal.engine.EngineExec.ABORT_KILL_NANOS;
import static dev.sandboxkit.docker.internal.engine.EngineExec.MARKER;
import static dev.sandboxkit.docker.internal.engine.EngineExec.shortId;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Kills the processes of an exec, which closing its stream does not do: a second exec runs {@link #KILL_SCRIPT},
 * which SIGKILLs every process (and process group) whose environment holds the exec's {@value EngineExec#MARKER};
 * an image without {@code /bin/sh} falls back to killing the host pid tree when the engine is local.
 */
final class ExecKiller {
    /**
     * Kills processes whose environment holds exactly {@code SANDBOXKIT_EXEC_ID=$1}, with their process
     * groups (an exec'd process leads its own group and session). One {@code grep -z} over all
     * environ files where grep supports it (GNU, busybox); otherwise one pipe per process. Up to three
     * passes catch processes forked during the previous one. Runs under dash and busybox sh.
     */
    static final String KILL_SCRIPT = String.join("\n",
            "m=\"" + MARKER + "=$1\"",
            "if printf 'a\\0' | grep -qzxF a 2>/dev/null; then z=1; else z=; fi",
            "n=0",
            "while [ \"$n\" -lt 3 ]; do",
            "  n=$((n+1))",
            "  if [ -n \"$z\" ]; then",
            "    pids=$(grep -lzxF \"$m\" /proc/[0-9]*/environ 2>/dev/null)",
            "  else",
            "    pids=",
            "    for f in /proc/[0-9]*/environ; do",
            "      tr '\\0' '\\n' 2>/dev/null <\"$f\" | grep -qxF \"$m\" && pids=\"$pids $f\"",
            "    done",
            "  fi",
            "  [ -n \"$pids\" ] || break",
            "  for f in $pids; do",
            "    p=${f#/proc/}; p=${p%/environ}",
            "    kill -9 -- \"-$p\" 2>/dev/null; kill -9 \"$p\" 2>/dev/null",
            "  done",
            "done",
            "exit 0");

    private static final Logger log = LoggerFactory.getLogger(ExecKiller.class);

    private final EngineExec execs;
    private final EngineClient client;
    private final DockerHost host;

    ExecKiller(EngineExec execs, EngineClient client) {
        this.execs = execs;
        this.client = client;
        this.host = client.host();
    }

    /** Kills the marked processes of a container; see {@link EngineExec#killMarked}. */
    void killMarked(String containerId, String marker) {
        ExecRequest request = ExecRequest.of(List.of("/bin/sh", "-c", KILL_SCRIPT, "sh", marker))
                .withTimeout(Duration.ofSeconds(3)).withOutputLimit(4096);
        try {
            execs.execute(new Run(containerId, request, "/", false), false);
        } catch (RuntimeException e) {
            log.debug("Kill of marked processes in {} failed: {}", shortId(containerId), e.toString());
        }
    }

    /** Kills after an interrupt, keeps the thread's interrupt status, and returns the exception to throw. */
    SandboxExecException interrupted(Run run) {
        Thread.interrupted();
        try {
            kill(run, System.nanoTime() + ABORT_KILL_NANOS);
        } finally {
            Thread.currentThread().interrupt();
        }
        return new SandboxExecException("interrupted while running a command in " + shortId(run.containerId)
                + "; the process was killed");
    }

    void abort(Run run) {
        boolean wasInterrupted = Thread.interrupted();
        try {
            kill(run, System.nanoTime() + ABORT_KILL_NANOS);
        } finally {
            if (wasInterrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Kills the exec's processes: the marker kill script in the container, else (no shell in the image)
     * the host pid tree when the engine is local. Best effort, never throws.
     */
    void kill(Run run, long deadline) {
        if (run.containerRemoved) {
            return;
        }
        ExecResult killer = null;
        try {
            long budget = Math.max(TimeUnit.MILLISECONDS.toNanos(100), deadline - System.nanoTime());
            ExecRequest request = ExecRequest.of(List.of("/bin/sh", "-c", KILL_SCRIPT, "sh", run.marker))
                    .withTimeout(Duration.ofNanos(budget)).withOutputLimit(4096);
            // From "/": the sandbox may have made /workspace unusable.
            killer = execs.execute(new Run(run.containerId, request, "/", false), false);
        } catch (SandboxNotFoundException e) {
            return; // the container is gone, and its processes with it
        } catch (RuntimeException e) {
            log.debug("Kill exec in {} failed: {}", shortId(run.containerId), e.toString());
        }
        if (killer == null || killer.exitCode() == 126 || killer.exitCode() == 127 || killer.timedOut()) {
            killOnHost(run);
        }
    }

    /** Fallback for images without /bin/sh: SIGKILL the exec's host process and its descendants. */
    private void killOnHost(Run run) {
        if (!host.unix() || run.execId == null) {
            return;
        }
        try {
            EngineClient.Response r = client.call("GET", "/exec/" + segment(run.execId) + "/json", null);
            long pid = r.status() == 200 ? r.json().path("Pid").asLong(0) : 0;
            if (pid <= 0 && run.podman) {
                pid = markedProcess(run.marker); // Podman's exec inspect has no pid: find it by its marker
            }
            if (pid <= 0) {
                return;
            }
            Path proc = Path.of("/proc", Long.toString(pid));
            // The marker proves it is our process: the pid is from the engine's namespace, which may not be ours.
            if (!Files.isDirectory(proc) || !environHolds(proc.resolve("environ"), MARKER + "=" + run.marker)) {
                log.warn("Cannot kill timed-out exec in {}: the image has no /bin/sh and host pid {} is not visible",
                        shortId(run.containerId), pid);
                return;
            }
            ProcessHandle.of(pid).ifPresent(root -> {
                List<ProcessHandle> tree = root.descendants().toList();
                root.destroyForcibly();
                tree.forEach(ProcessHandle::destroyForcibly);
            });
        } catch (IOException | RuntimeException e) {
            log.warn("Cannot kill timed-out exec in {} on the host: {}", shortId(run.containerId), e.toString());
        }
    }

    /**
     * The host process that carries the exec's marker in its environment and whose parent does not (the exec's
     * root, not a child that inherited it), or 0. Scans /proc: a failure path on a local engine only.
     */
    private static long markedProcess(String marker) {
        String entry = MARKER + "=" + marker;
        return ProcessHandle.allProcesses().filter(p -> marked(p.pid(), entry))
                .filter(p -> p.parent().map(parent -> !marked(parent.pid(), entry)).orElse(true))
                .mapToLong(ProcessHandle::pid).findFirst().orElse(0);
    }

    private static boolean marked(long pid, String entry) {
        try {
            return environHolds(Path.of("/proc", Long.toString(pid), "environ"), entry);
        } catch (IOException | RuntimeException e) {
            return false; // exited, or not ours to read
        }
    }

    private static boolean environHolds(Path environ, String entry) throws IOException {
        byte[] env = Files.readAllBytes(environ);
        byte[] want = entry.getBytes(StandardCharsets.UTF_8);
        int start = 0;
        for (int i = 0; i <= env.length; i++) {
            if (i == env.length || env[i] == 0) {
                if (i - start == want.length && java.util.Arrays.equals(env, start, i, want, 0, want.length)) {
                    return true;
                }
                start = i + 1;
            }
        }
        return false;
    }
}
