package dev.sandboxkit.mcp;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The orderly end, run once by whoever gets there first (the main thread after the client went away, or the
 * shutdown hook on a signal); the other waits for it: close the MCP sessions (their sandboxes are released or
 * destroyed), then the manager (it suspends what is left), then the store.
 */
final class ServerShutdown implements Runnable {
    private final Logger log;
    private final SandboxManager manager;
    private final SessionStore store;
    private final AtomicBoolean started = new AtomicBoolean();
    private final CountDownLatch done = new CountDownLatch(1);
    volatile SandboxMcpServer server;

    ServerShutdown(Logger log, SandboxManager manager, SessionStore store) {
        this.log = log;
        this.manager = manager;
        this.store = store;
    }

    @Override
    public void run() {
        if (!started.compareAndSet(false, true)) {
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            step("closing the MCP sessions", () -> {
                if (server != null) {
                    server.close();
                }
            });
            step("closing the sandbox manager", manager::close);
            step("closing the session store", () -> {
                if (store != null) {
                    store.close();
                }
            });
            log.info("sandbox-mcp stopped");
        } finally {
            done.countDown();
        }
    }

    private void step(String what, Runnable action) {
        try {
            action.run();
        } catch (RuntimeException e) {
            log.warn("Shutdown: {} failed: {}", what, e.toString());
        }
    }
}
