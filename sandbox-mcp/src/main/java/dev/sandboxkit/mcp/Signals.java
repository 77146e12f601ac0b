package dev.sandboxkit.mcp;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;

/**
 * Runs the orderly shutdown on SIGTERM and SIGINT <em>before</em> the JVM begins its own shutdown. A shutdown hook
 * is too late: H2 closes its databases from its own hook at the same moment (with {@code AUTO_SERVER} it cannot be
 * told not to), so the manager could no longer record its sessions suspended, and a restarted server would find
 * them held. Uses {@code sun.misc.Signal} (module {@code jdk.unsupported}) through reflection; where it is missing
 * the shutdown hook remains the only path.
 */
final class Signals {
    private Signals() {
    }

    /**
     * Calls {@code action} on its own thread when the process gets SIGTERM or SIGINT; the JVM keeps running until
     * someone exits.
     *
     * @return whether the handlers could be installed
     */
    static boolean onTermination(Runnable action) {
        try {
            Class<?> signal = Class.forName("sun.misc.Signal");
            Class<?> handler = Class.forName("sun.misc.SignalHandler");
            Method handle = signal.getMethod("handle", signal, handler);
            Object proxy = Proxy.newProxyInstance(Signals.class.getClassLoader(), new Class<?>[]{handler},
                    (self, method, args) -> {
                        if (method.getName().equals("handle")) {
                            Thread t = new Thread(action, "sandbox-mcp-signal");
                            t.setDaemon(false); // keeps the JVM up until the shutdown is done
                            t.start();
                            return null;
                        }
                        return switch (method.getName()) {
                            case "hashCode" -> System.identityHashCode(self);
                            case "equals" -> self == args[0];
                            default -> "sandbox-mcp signal handler";
                        };
                    });
            for (String name : new String[]{"TERM", "INT"}) {
                handle.invoke(null, signal.getConstructor(String.class).newInstance(name), proxy);
            }
            return true;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return false;
        }
    }
}
