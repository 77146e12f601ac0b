package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.spi.SessionStore;

import java.nio.file.Path;
import java.time.Duration;

/**
 * Main class of a forked JVM running a real manager (Docker driver) on a JDBC store, or on its own in-memory one:
 * {@code <h2|pg|memory> <file|schema|-> <workspaceRoot> <instanceId> <fleet|-> <leaseMillis> <command> [args]}
 * ({@code -} as the fleet: none named, the core's default).
 * Commands: {@code exec <session> <shell>} (prints INFO, OUT, EXIT, then closes the manager), and
 * {@code hold <prefix> <n>} (acquires n sessions, writes note.txt in each, prints READY, waits to be killed).
 */
public final class ManagerWorker {
    private ManagerWorker() {
    }

    public static void main(String[] args) throws Exception {
        String kind = args[0];
        String location = args[1];
        Path workspaceRoot = Path.of(args[2]);
        String instanceId = args[3];
        String fleet = args[4];
        Duration lease = Duration.ofMillis(Long.parseLong(args[5]));
        String command = args[6];
        SessionStore store = kind.equals("memory") ? SessionStore.inMemory() : StoreWorker.open(kind, location);
        SandboxManager.Builder builder = SandboxManager.builder().driver("docker").workspaceRoot(workspaceRoot)
                .store(store).instanceId(instanceId).leaseDuration(lease)
                .idleTimeout(Duration.ofMinutes(5)).reconcileInterval(Duration.ofMinutes(5));
        SandboxManager manager = (fleet.equals("-") ? builder : builder.fleet(fleet)).build();
        switch (command) {
            case "exec" -> {
                String session = args[7];
                SessionInfo before = manager.session(session).orElse(null);
                System.out.println("INFO " + (before == null ? "MISSING" : before.state() + " " + before.workspace()));
                ExecResult r = manager.exec(session, ExecRequest.shell(args[8]));
                System.out.println("OUT " + r.stdout().strip());
                System.out.println("EXIT " + r.exitCode());
                manager.close();
                store.close();
                System.out.println("DONE");
            }
            case "hold" -> {
                String prefix = args[7];
                int n = Integer.parseInt(args[8]);
                for (int i = 0; i < n; i++) {
                    String id = prefix + i;
                    manager.acquire(id, Docker.SPEC);
                    ExecResult r = manager.exec(id, ExecRequest.shell("echo from-" + id + " > note.txt"));
                    System.out.println("HELD " + id + " " + r.exitCode() + " "
                            + manager.session(id).orElseThrow().sandboxId());
                }
                System.out.println("READY");
                System.out.flush();
                Thread.sleep(Long.MAX_VALUE);
            }
            default -> throw new IllegalArgumentException(command);
        }
        System.out.flush();
        System.exit(0);
    }
}
