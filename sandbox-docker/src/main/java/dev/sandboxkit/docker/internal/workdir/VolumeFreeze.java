package dev.sandboxkit.docker.internal.workdir;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineExec;
import dev.sandboxkit.docker.internal.engine.ExecGate;
import dev.sandboxkit.docker.internal.files.VolumeAccess;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static dev.sandboxkit.docker.internal.engine.EngineClient.segment;

/**
 * Freezes ({@code docker pause}, the cgroup freezer) every running container on a volume, except this backend's
 * own helpers and one-off containers, around one files call: the engine's archive calls lstat and then open a
 * file without {@code O_NONBLOCK}, and a sandbox swapping a FIFO in between would block that call, the helper and
 * the workdir's deletion for good. Frozen, nothing in the sandbox can change the tree, so the component checks
 * and the engine's call see one state. Nothing runs on the volume (a suspended session): no freeze, no cost
 * beyond one container listing. A container that cannot be frozen fails the call (fail closed); one that stops
 * or goes meanwhile, or that someone else paused, is left as it is.
 */
final class VolumeFreeze {
    /** How long a freeze waits for an exec this driver just started to have its process (about a millisecond). */
    private static final long CONFIRM_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** runc's "unable to freeze" is transient; attempts 20, 40, 80, 160 ms apart. */
    static final int PAUSE_ATTEMPTS = 5;
    private static final Logger log = LoggerFactory.getLogger(VolumeFreeze.class);

    private final EngineClient engine;

    VolumeFreeze(EngineClient engine) {
        this.engine = engine;
    }

    /** Runs {@code body} with the volume's running containers frozen ({@code live} true), or as it is. */
    <T> T around(String volume, VolumeAccess.Quiesced<T> body) {
        ExecGate gate = engine.gate();
        // First the volume, so that no container of this driver starts on it meanwhile; then its containers.
        try (ExecGate.Hold starts = gate.freezeVolume(VolumeWorkdirs.PREFIX + volume)) {
            List<String> running = running(volume);
            if (running.isEmpty()) {
                return body.run(false);
            }
            try (ExecGate.Hold execs = gate.freeze(running)) {
                List<String> paused = new ArrayList<>(running.size());
                try {
                    for (String id : running) {
                        confirmStarted(id, gate);
                        if (pause(id, volume)) {
                            paused.add(id);
                        }
                    }
                    return body.run(true);
                } finally {
                    unpause(paused);
                }
            }
        }
    }

    /** The running containers that mount the volume, without a role label (helpers, one-off containers). */
    private List<String> running(String volume) {
        String filters = "{\"volume\":[" + EngineClient.JSON.valueToTree(volume) + "],\"status\":[\"running\"]}";
        EngineClient.Response r = call("GET", "/containers/json?filters="
                + URLEncoder.encode(filters, StandardCharsets.UTF_8), volume);
        if (r.status() != 200) {
            throw refused("list the containers on", volume, r);
        }
        List<String> out = new ArrayList<>();
        try {
            for (JsonNode c : r.json()) {
                if (!c.path("Labels").has(VolumeWorkdirs.ROLE)) {
                    out.add(c.path("Id").asText());
                }
            }
        } catch (IOException e) {
            throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "unexpected container listing for "
                    + "volume " + volume + ": " + e, e);
        }
        return out;
    }

    /**
     * Waits until the execs this driver started in the container have their process: the engine answers a start
     * before the runtime has run it, and the runtime refuses to exec into a frozen container.
     */
    private void confirmStarted(String containerId, ExecGate gate) {
        long until = System.nanoTime() + CONFIRM_NANOS;
        for (String execId : gate.unconfirmed(containerId)) {
            while (true) {
                EngineClient.Response r = call("GET", "/exec/" + segment(execId) + "/json", containerId);
                JsonNode j = null;
                try {
                    j = r.status() == 200 ? r.json() : null;
                } catch (IOException ignored) {
                    // as gone: nothing to wait for
                }
                if (j == null || j.path("Pid").asLong(0) != 0 || !j.path("ExitCode").isNull()
                        || System.nanoTime() - until >= 0) {
                    gate.done(containerId, execId);
                    break;
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR,
                            "interrupted while freezing the sandbox for a files call", e);
                }
            }
        }
    }

    /** Whether this call paused the container (not when it is gone, stopped or already paused). */
    private boolean pause(String id, String volume) {
        for (int attempt = 1; ; attempt++) {
            EngineClient.Response r = call("POST", "/containers/" + segment(id) + "/pause", volume);
            if (r.status() == 204 || r.status() == 200) {
                return true;
            }
            if (r.status() == 404 || r.status() == 409) {
                return false; // gone, not running, or paused by someone else: nothing runs in it
            }
            if (attempt == PAUSE_ATTEMPTS || !r.message().contains("unable to freeze")) {
                throw refused("freeze container " + EngineExec.shortId(id) + " on", volume, r);
            }
            // runc gave up while a process was mid-fork (cgroup v1 freezer); it succeeds once that has passed.
            log.debug("Freezing container {} failed transiently (attempt {}): {}", EngineExec.shortId(id), attempt,
                    r.message());
            try {
                Thread.sleep(10L << attempt);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR,
                        "interrupted while freezing the sandbox for a files call on " + volume, e);
            }
        }
    }

    /** Unpauses, interrupted or not (the flag is kept); a container gone or stopped meanwhile is fine. */
    private void unpause(List<String> paused) {
        boolean interrupted = Thread.interrupted();
        try {
            for (String id : paused) {
                for (int attempt = 1; ; attempt++) {
                    String problem;
                    try {
                        EngineClient.Response r = engine.call("POST", "/containers/" + segment(id) + "/unpause", null);
                        if (r.status() == 204 || r.status() == 200 || r.status() == 404 || r.status() == 409) {
                            break;
                        }
                        problem = r.status() + ": " + r.message();
                    } catch (IOException e) {
                        problem = e.toString();
                    }
                    if (attempt == 3) {
                        log.error("Could not unpause container {} after a files call ({}); it stays frozen until "
                                + "unpaused (docker unpause)", id, problem);
                        break;
                    }
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private EngineClient.Response call(String method, String path, String about) {
        try {
            return engine.call(method, path, null);
        } catch (java.io.InterruptedIOException e) {
            Thread.currentThread().interrupt();
            throw new SandboxFileException(SandboxFileException.Reason.IO_ERROR,
                    "interrupted while freezing the sandbox for a files call on " + about, e);
        } catch (IOException e) {
            throw engine.host().unreachable(e);
        }
    }

    private static SandboxFileException refused(String what, String volume, EngineClient.Response r) {
        return new SandboxFileException(SandboxFileException.Reason.IO_ERROR, "cannot " + what + " volume " + volume
                + " (" + r.status() + "): " + r.message() + "; a files call on a running sandbox's volume needs its "
                + "containers frozen (docker pause), so it is refused");
    }
}
