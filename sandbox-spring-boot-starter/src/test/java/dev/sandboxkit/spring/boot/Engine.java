package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SandboxLabels;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/** The real engine, seen the way an operator sees it: through the docker CLI, by label. */
final class Engine {
    /** The local test image (FROM scratch + static busybox); never pulled. */
    static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");

    private Engine() {
    }

    /** A fleet of its own per context, so no test ever sees (or sweeps) another build's containers. */
    static String newFleet() {
        return "boot-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** The properties every test context starts from: Docker, the test image, a private fleet and root. */
    static String[] base(String fleet, Path root, String... more) {
        String[] base = {
            "sandboxkit.driver=docker",
            "sandboxkit.fleet=" + fleet,
            "sandboxkit.workspace-root=" + root,
            "sandboxkit.spec.image=" + IMAGE,
            "sandboxkit.spec.pull-policy=never",
        };
        String[] all = Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, all, base.length, more.length);
        return all;
    }

    /** Ids of every container of the fleet, running or not ({@code docker ps -a}). */
    static List<String> containers(String fleet) {
        ProcessBuilder pb = new ProcessBuilder("docker", "ps", "-a", "-q", "--filter",
                "label=" + SandboxLabels.FLEET + "=" + fleet).redirectErrorStream(true);
        try {
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new AssertionError("docker ps failed: " + out);
            }
            return out.lines().filter(l -> !l.isBlank()).toList();
        } catch (IOException e) {
            throw new AssertionError("cannot run the docker CLI", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static void awaitState(SandboxManager manager, String session, SessionState state) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (manager.session(session).map(SessionInfo::state).orElse(null) != state) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("session " + session + " did not become " + state + " within 20 s: "
                        + manager.session(session));
            }
            Thread.sleep(50);
        }
    }

    /** The sandboxkit exception in a startup failure's cause chain (Spring wraps it in bean creation errors). */
    static SandboxException sandboxFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SandboxException e) {
                return e;
            }
        }
        throw new AssertionError("no SandboxException in the cause chain", failure);
    }
}
