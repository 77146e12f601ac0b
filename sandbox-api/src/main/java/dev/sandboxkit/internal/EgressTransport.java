package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.PortConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Carries the connections a sandbox opens to its egress endpoint ({@code 127.0.0.1:3128} inside) to the JVM, using
 * only the compute SPI's exec and {@link ComputeDriver#connect}: the sandbox keeps network {@code none}, and the
 * same code serves every driver that forwards ports.
 *
 * <p>Inside the sandbox three BusyBox {@code nc -ll} listeners run (design: docs/design/egress-transport.md):
 * <ul>
 *   <li>the endpoint: one handler per client, which makes two FIFOs named by its pid and announces the pid on a
 *       control FIFO, then copies the client's bytes into one and the other's back to the client;</li>
 *   <li>join: the JVM connects, sends {@code <pid>\n}, and from then on its connection is that client's;</li>
 *   <li>control: one long connection per sandbox that streams the announced pids (a new one ends the old one's
 *       reader).</li>
 * </ul>
 * A sandbox process can talk to the join and control ports itself; that only ever reaches the sandbox's own
 * connections, and the JVM bounds what it opens per sandbox. No threads of its own: the control readers and joins
 * run on the given executor.
 */
public final class EgressTransport {
    private static final Logger log = LoggerFactory.getLogger(EgressTransport.class);
    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(30);
    private static final int MISSING = 3;
    private static final int NO_LISTENER = 5;
    private static final int NO_DIRECTORY = 4;

    /**
     * The ports inside the sandbox, and the bound on joined connections per sandbox.
     *
     * @param endpointPort      where the sandbox's tools connect ({@code HTTP_PROXY})
     * @param joinPort          where the JVM joins one client connection
     * @param controlPort       where the JVM reads the announced clients
     * @param maxOpenPerSandbox joined connections open at once per sandbox; more announced ones are not joined
     */
    public record Settings(int endpointPort, int joinPort, int controlPort, int maxOpenPerSandbox) {
        /** 3128, 3129, 3130; 256 open per sandbox. */
        public static final Settings DEFAULTS = new Settings(3128, 3129, 3130, 256);
    }

    private final ComputeDriver compute;
    private final Executor io;
    private final Settings settings;
    private final Map<String, Reader> readers = new ConcurrentHashMap<>();

    /**
     * Creates the transport.
     *
     * @param compute  the driver that runs the sandboxes
     * @param io       runs the control readers (one long task per sandbox) and the joins
     * @param settings ports and bound
     */
    public EgressTransport(ComputeDriver compute, Executor io, Settings settings) {
        this.compute = compute;
        this.io = io;
        this.settings = settings;
    }

    /**
     * The environment that points a sandbox's HTTP clients at the endpoint: curl, wget, pip, git and most others
     * read {@code http_proxy}/{@code https_proxy}, some only the upper-case names; npm and yarn their own. (A JVM in
     * the sandbox needs {@code -Dhttps.proxyHost}: setting {@code JAVA_TOOL_OPTIONS} here would print a line on every
     * {@code java} run and override the user's.)
     *
     * @param settings the ports
     * @return variable to value
     */
    public static Map<String, String> proxyEnvironment(Settings settings) {
        String url = "http://127.0.0.1:" + settings.endpointPort();
        String none = "localhost,127.0.0.1,::1";
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HTTP_PROXY", url);
        env.put("HTTPS_PROXY", url);
        env.put("http_proxy", url);
        env.put("https_proxy", url);
        env.put("NO_PROXY", none);
        env.put("no_proxy", none);
        env.put("npm_config_proxy", url);
        env.put("npm_config_https_proxy", url);
        env.put("YARN_HTTP_PROXY", url);
        env.put("YARN_HTTPS_PROXY", url);
        env.put("PIP_PROXY", url);
        return env;
    }

    /**
     * Starts (or starts again) the in-sandbox end and the JVM's control reader; returns once the endpoint accepts
     * connections. Each connection a sandbox process opens to it is handed to {@code onConnection}, on an I/O
     * thread, as a joined {@link PortConnection} whose first byte is the client's first byte.
     *
     * @param sandboxId    the sandbox
     * @param onConnection takes each connection; it must close it in the end
     * @throws SandboxConfigurationException if the image cannot run the endpoint (names what it lacks)
     * @throws SandboxAcquireException       if the endpoint did not come up
     */
    public void start(String sandboxId, Consumer<PortConnection> onConnection) {
        ExecResult r = compute.exec(sandboxId, ExecRequest.shell(script()).withTimeout(SETUP_TIMEOUT));
        String said = (r.stdout() + r.stderr()).strip();
        if (r.exitCode() == MISSING || r.exitCode() == 127) {
            throw new SandboxConfigurationException("egress needs sh, nc (BusyBox-style, with -l and -e) and mkfifo in "
                    + "the image; missing: " + (said.isEmpty() ? "sh" : said) + " (sandbox " + sandboxId + ")");
        }
        if (r.exitCode() == NO_LISTENER) {
            throw new SandboxConfigurationException("egress needs an nc that listens and runs a handler per "
                    + "connection (BusyBox nc: -ll -p PORT -e CMD); this image's could not (sandbox " + sandboxId
                    + "): " + said);
        }
        if (r.exitCode() == NO_DIRECTORY) {
            throw new SandboxConfigurationException("egress needs a writable /dev/shm, $TMPDIR or /tmp in the sandbox "
                    + "for its FIFOs (sandbox " + sandboxId + "): " + said);
        }
        if (!r.isSuccess()) {
            throw new SandboxAcquireException("could not start the egress endpoint in sandbox " + sandboxId + " (exit "
                    + r.exitCode() + (r.timedOut() ? ", timed out" : "") + "): " + said);
        }
        PortConnection control = compute.connect(sandboxId, settings.controlPort());
        Reader reader = new Reader(sandboxId, control, onConnection);
        Reader old = readers.put(sandboxId, reader);
        if (old != null) {
            old.close();
        }
        try {
            io.execute(reader);
        } catch (RuntimeException rejected) {
            readers.remove(sandboxId, reader);
            reader.close();
            throw rejected;
        }
    }

    /**
     * Stops the control reader of a sandbox (usually being removed); idempotent. Joined connections end with
     * their sandbox.
     *
     * @param sandboxId the sandbox
     */
    public void stop(String sandboxId) {
        Reader r = readers.remove(sandboxId);
        if (r != null) {
            r.close();
        }
    }

    /** Stops every reader. */
    public void close() {
        readers.keySet().forEach(this::stop);
    }

    /**
     * The in-sandbox end. Exit codes: 3 an applet is missing (named on stdout), 4 no directory for the FIFOs, 5 the
     * listeners did not come up. A background command in a non-interactive sh reads /dev/null, so each handler dups
     * the socket first ({@code exec 3<&0}); the control handler must send nothing (BusyBox nc stops relaying when
     * its socket's send buffer fills). The copies are dd, not cat: BusyBox cat copies with sendfile, which from a
     * socket into a FIFO held the request's bytes until the client closed (seen on runc: a wget that hung).
     */
    private String script() {
        int ep = settings.endpointPort();
        int join = settings.joinPort();
        int ctl = settings.controlPort();
        return "for a in nc mkfifo dd; do command -v $a >/dev/null 2>&1 || { echo $a; exit 3; }; done\n"
                // setsid where there is one: the listeners then outlive whatever ends the exec's process group.
                + "S=; command -v setsid >/dev/null 2>&1 && S=setsid\n"
                + "d=/dev/shm/.sandboxkit-egress; [ -d /dev/shm ] && [ -w /dev/shm ] || d=${TMPDIR:-/tmp}/.sandboxkit-egress\n"
                + "mkdir -p $d 2>/dev/null && cd $d || { echo \"cannot create $d\"; exit 4; }\n"
                + "[ -f pids ] && kill $(cat pids) 2>/dev/null; [ -f reader ] && kill $(cat reader) 2>/dev/null\n"
                + "rm -f ctl reader ./*.u ./*.d; mkfifo ctl || exit 4\n"
                + "export SBX_EGRESS=$d\n"
                // Endpoint: per client, FIFOs named by the handler's pid; the pid goes to the control stream.
                + "$S nc -ll -p " + ep + " -e sh -c 'd=$SBX_EGRESS; i=$$; mkfifo $d/$i.u $d/$i.d || exit 1;"
                + " echo $i > $d/ctl; exec 3<&0; dd bs=65536 <&3 > $d/$i.u 2>/dev/null & up=$!; dd bs=65536 < $d/$i.d 2>/dev/null; kill $up 2>/dev/null;"
                + " rm -f $d/$i.u $d/$i.d' </dev/null >/dev/null 2>&1 & p1=$!\n"
                // Join: the first line names the client; the JVM's connection is then the client's. Processes count
                // against the sandbox's pids limit: the handler becomes its last copy.
                + "$S nc -ll -p " + join + " -e sh -c 'read i || exit 1; case $i in *[!0-9]*|\"\") exit 1;; esac;"
                + " d=$SBX_EGRESS; [ -p $d/$i.u ] || exit 1; exec 3<&0; dd bs=65536 < $d/$i.u 2>/dev/null & exec dd bs=65536 <&3 > $d/$i.d 2>/dev/null'"
                + " </dev/null >/dev/null 2>&1 & p2=$!\n"
                // Control: a new reader ends the previous one, which a client that went away may have left running.
                + "$S nc -ll -p " + ctl + " -e sh -c 'd=$SBX_EGRESS; [ -f $d/reader ] && kill $(cat $d/reader)"
                + " 2>/dev/null; echo $$ > $d/reader; exec dd bs=65536 0<>$d/ctl 2>/dev/null' </dev/null >/dev/null 2>&1 & p3=$!\n"
                + "echo \"$p1 $p2 $p3\" > pids\n"
                + "i=0; until echo | nc 127.0.0.1 " + join + " >/dev/null 2>&1; do i=$((i+1));"
                + " if [ $i -gt 200 ] || ! kill -0 $p1 $p2 $p3 2>/dev/null; then echo 'nc -ll -e did not listen'; exit 5; fi;"
                + " sleep 0.05; done\n";
    }

    /** Reads one sandbox's announced pids and joins each. Runs on an I/O thread until the sandbox goes. */
    private final class Reader implements Runnable {
        private final String sandboxId;
        private final PortConnection control;
        private final Consumer<PortConnection> onConnection;
        private final AtomicInteger open = new AtomicInteger();
        private final AtomicBoolean closed = new AtomicBoolean();

        Reader(String sandboxId, PortConnection control, Consumer<PortConnection> onConnection) {
            this.sandboxId = sandboxId;
            this.control = control;
            this.onConnection = onConnection;
        }

        @Override
        public void run() {
            InputStream in = control.input();
            try {
                String line;
                while ((line = readLine(in)) != null) {
                    String pid = line.strip();
                    if (pid.isEmpty() || pid.length() > 10 || !pid.chars().allMatch(Character::isDigit)) {
                        continue; // not an announcement: the sandbox wrote to the control FIFO itself
                    }
                    if (open.incrementAndGet() > settings.maxOpenPerSandbox()) {
                        open.decrementAndGet();
                        log.debug("Sandbox {}: {} egress connections open, not joining {}", sandboxId,
                                settings.maxOpenPerSandbox(), pid);
                        continue;
                    }
                    try {
                        io.execute(() -> join(pid));
                    } catch (RuntimeException rejected) {
                        open.decrementAndGet();
                    }
                }
            } catch (IOException e) {
                log.debug("Sandbox {}: egress control stream ended: {}", sandboxId, e.toString());
            } finally {
                close();
                readers.remove(sandboxId, this);
            }
        }

        private void join(String pid) {
            PortConnection c;
            try {
                c = compute.connect(sandboxId, settings.joinPort());
            } catch (SandboxException gone) {
                open.decrementAndGet();
                log.debug("Sandbox {}: could not join egress connection {}: {}", sandboxId, pid, gone.toString());
                return;
            }
            try {
                OutputStream out = c.output();
                out.write((pid + "\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (IOException e) {
                c.close();
                open.decrementAndGet();
                return;
            }
            onConnection.accept(new Counted(c, open));
        }

        void close() {
            if (closed.compareAndSet(false, true)) {
                control.close();
            }
        }
    }

    /** One line of the control stream, or null at its end; lines are pids, so a long one is cut short. */
    private static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                return b.toString(StandardCharsets.US_ASCII);
            }
            if (b.size() < 64) {
                b.write(c);
            }
        }
        return b.size() > 0 ? b.toString(StandardCharsets.US_ASCII) : null;
    }

    /** A joined connection that gives back its place under the bound when it closes. */
    private static final class Counted implements PortConnection {
        private final PortConnection c;
        private final AtomicInteger open;
        private final AtomicBoolean closed = new AtomicBoolean();

        Counted(PortConnection c, AtomicInteger open) {
            this.c = c;
            this.open = open;
        }

        @Override
        public InputStream input() {
            return c.input();
        }

        @Override
        public OutputStream output() {
            return c.output();
        }

        @Override
        public void shutdownOutput() throws IOException {
            c.shutdownOutput();
        }

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                open.decrementAndGet();
                c.close();
            }
        }
    }
}
