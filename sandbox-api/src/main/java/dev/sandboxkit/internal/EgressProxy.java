package dev.sandboxkit.internal;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.spi.EgressResolver;
import dev.sandboxkit.spi.PortConnection;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The host-side HTTP proxy that serves each connection a sandbox opens to its proxy endpoint: CONNECT tunnels
 * and absolute-URI plain HTTP, checked against the session's {@link EgressPolicy}. One per manager; it has no
 * threads of its own and runs every connection on the given executor.
 */
public final class EgressProxy {

    /**
     * Limits and timeouts.
     *
     * @param maxPerSession    open connections allowed per session
     * @param maxTotal         open connections allowed per manager
     * @param headReadTimeout  time to read the request head; the connection is closed after it
     * @param headSizeCap      largest request head accepted, bytes
     * @param connectTimeout   upstream connect timeout
     * @param tunnelIdle       idle timeout on the upstream socket of a tunnel
     * @param maxBytesPerSession bytes one session may move, both ways together; 0 for no cap
     */
    public record Settings(int maxPerSession, int maxTotal, Duration headReadTimeout, int headSizeCap,
                           Duration connectTimeout, Duration tunnelIdle, long maxBytesPerSession) {

        /** The defaults: 64 per session, 1024 per manager, 10 s head, 16 KiB head, 10 s connect, 5 min idle, no cap. */
        public static final Settings DEFAULTS = new Settings(64, 1024, Duration.ofSeconds(10), 16 * 1024,
                Duration.ofSeconds(10), Duration.ofMinutes(5), 0);
    }

    /**
     * Hears what the proxy did, on the I/O thread that served the connection.
     */
    public interface Listener {
        /**
         * A connection was refused (policy, limit, or a malformed request).
         *
         * @param sessionId the session
         * @param sandboxId its sandbox
         * @param host      the host asked for (empty if the request could not be read)
         * @param port      the port asked for (0 if unknown)
         * @param reason    the one-line reason sent to the sandbox
         */
        void denied(String sessionId, String sandboxId, String host, int port, String reason);

        /**
         * A connection was allowed and connected upstream.
         *
         * @param sessionId the session
         * @param sandboxId its sandbox
         * @param host      the host
         * @param port      the port
         */
        void allowed(String sessionId, String sandboxId, String host, int port);

        /**
         * An allowed connection ended.
         *
         * @param sessionId the session
         * @param bytesIn   bytes it carried from upstream to the sandbox
         * @param bytesOut  bytes it carried from the sandbox upstream
         */
        void closed(String sessionId, long bytesIn, long bytesOut);
    }

    /**
     * What one session's sandbox did through the proxy.
     *
     * @param allowed  connections allowed
     * @param denied   connections refused by policy or limit
     * @param bytesIn  bytes from upstream to the sandbox
     * @param bytesOut bytes from the sandbox to upstream
     */
    public record Counters(long allowed, long denied, long bytesIn, long bytesOut) {
    }

    private static final class Session {
        final AtomicInteger open = new AtomicInteger();
        final AtomicLong allowed = new AtomicLong();
        final AtomicLong denied = new AtomicLong();
        final AtomicLong bytesIn = new AtomicLong();
        final AtomicLong bytesOut = new AtomicLong();
    }

    /** How long a connection that was answered may take to close from the sandbox's side. */
    private static final long GRACE_MILLIS = 5_000;

    private final Settings settings;
    private final Executor executor;
    private final ScheduledExecutorService scheduler;
    private final Clock clock;
    private final Listener listener;
    private SSLSocketFactory tlsFactory;
    private final EgressResolver resolver;
    private final boolean resolverTrusted;
    private final AtomicInteger openTotal = new AtomicInteger();
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    /**
     * Creates the proxy.
     *
     * @param settings limits and timeouts
     * @param executor  runs each connection's I/O (two tasks per tunnel)
     * @param scheduler runs the timeouts
     * @param clock     time source
     * @param resolver  an operator's resolver, trusted as given; {@code null} for the system DNS, whose local
     *                  answers are refused unless a CIDR rule allows them
     * @param listener  hears refusals, connections and their bytes
     */
    public EgressProxy(Settings settings, Executor executor, ScheduledExecutorService scheduler, Clock clock,
                       @Nullable EgressResolver resolver, Listener listener) {
        this.settings = settings;
        this.executor = executor;
        this.scheduler = scheduler;
        this.clock = clock;
        this.listener = listener;
        this.resolverTrusted = resolver != null;
        this.resolver = resolver != null ? resolver : EgressResolver.system();
        this.tlsFactory = (SSLSocketFactory) SSLSocketFactory.getDefault();
    }

    /**
     * Creates the proxy with the TLS client used for {@link EgressPolicy#tlsUpstream} hosts (the JVM's default trust
     * store otherwise), for an operator's private CA or a test's.
     *
     * @param settings   limits and timeouts
     * @param executor   runs each connection's I/O
     * @param scheduler  runs the timeouts
     * @param clock      time source
     * @param resolver   an operator's resolver, or {@code null} for the system DNS
     * @param listener   hears refusals, connections and their bytes
     * @param tlsFactory makes the TLS connections to upstream hosts; the host name is checked (HTTPS rules)
     */
    public EgressProxy(Settings settings, Executor executor, ScheduledExecutorService scheduler, Clock clock,
                       @Nullable EgressResolver resolver, Listener listener, SSLSocketFactory tlsFactory) {
        this(settings, executor, scheduler, clock, resolver, listener);
        this.tlsFactory = tlsFactory;
    }

    /** TLS over a connected socket, with the certificate checked against the host name. */
    private Socket startTls(Socket plain, String host, int port) throws IOException {
        SSLSocket tlsSocket = (SSLSocket) tlsFactory.createSocket(plain, host, port, true);
        SSLParameters parameters = tlsSocket.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        tlsSocket.setSSLParameters(parameters);
        tlsSocket.setSoTimeout((int) settings.connectTimeout().toMillis());
        tlsSocket.startHandshake();
        tlsSocket.setSoTimeout(0);
        return tlsSocket;
    }

    /**
     * Serves one connection from a sandbox. Returns at once; the connection is always closed in the end.
     *
     * @param sessionId   session the sandbox belongs to
     * @param sandboxId   the sandbox
     * @param sandboxSide the connection
     * @param policy      read once per connection, so a policy change applies to the next connection
     */
    public void serve(String sessionId, String sandboxId, PortConnection sandboxSide, Supplier<EgressPolicy> policy) {
        Session s = sessions.computeIfAbsent(sessionId, k -> new Session());
        if (s.open.incrementAndGet() > settings.maxPerSession()
                | openTotal.incrementAndGet() > settings.maxTotal()) {
            s.open.decrementAndGet();
            openTotal.decrementAndGet();
            s.denied.incrementAndGet();
            String why = "too many open egress connections (" + settings.maxPerSession() + " per session)";
            listener.denied(sessionId, sandboxId, "", 0, why);
            // Written on the caller's thread (the transport's join): refusing must not take another one.
            reply(sandboxSide, 429, "Too Many Requests", why);
            finishLater(sandboxSide);
            return;
        }
        try {
            executor.execute(() -> {
                try {
                    handle(s, sessionId, sandboxId, sandboxSide, policy.get());
                } finally {
                    s.open.decrementAndGet();
                    openTotal.decrementAndGet();
                    finish(sandboxSide);
                }
            });
        } catch (RuntimeException rejected) {
            s.open.decrementAndGet();
            openTotal.decrementAndGet();
            reply(sandboxSide, 429, "Too Many Requests", "egress proxy busy");
            finishLater(sandboxSide);
        }
    }

    /** Schedules a task, or returns {@code null} when the scheduler is shut down (the manager is closing). */
    private @Nullable ScheduledFuture<?> later(Runnable task, long millis) {
        try {
            return scheduler.schedule(task, millis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            return null;
        }
    }

    /** {@link #finish} without a thread: half-close now, close after the grace period. */
    private void finishLater(PortConnection side) {
        try {
            side.shutdownOutput();
            if (later(side::close, GRACE_MILLIS) == null) {
                side.close();
            }
        } catch (IOException | RuntimeException gone) {
            side.close();
        }
    }

    /**
     * Ends a connection once the sandbox has read what was written to it: half-close, wait for the sandbox side to
     * end, then close. Closing at once could take the relay down before the last bytes left it (seen under gVisor:
     * a 403 that never arrived). A sandbox that does not close within {@value #GRACE_MILLIS} ms is cut off.
     */
    private void finish(PortConnection side) {
        ScheduledFuture<?> deadline = later(side::close, GRACE_MILLIS);
        if (deadline == null) {
            side.close();
            return;
        }
        try {
            side.shutdownOutput();
            InputStream in = side.input();
            byte[] discard = new byte[4096];
            while (in.read(discard) >= 0) {
                // what the sandbox still sends after its answer is not for anyone
            }
        } catch (IOException | RuntimeException ended) {
            // gone already: close below
        } finally {
            deadline.cancel(false);
            side.close();
        }
    }

    /**
     * What a session did so far.
     *
     * @param sessionId session
     * @return its counters, zero if it never used the proxy
     */
    public Counters counters(String sessionId) {
        Session s = sessions.get(sessionId);
        return s == null ? new Counters(0, 0, 0, 0)
                : new Counters(s.allowed.get(), s.denied.get(), s.bytesIn.get(), s.bytesOut.get());
    }

    /**
     * Forgets a session's counters (its open connections end when the sandbox side closes).
     *
     * @param sessionId session
     */
    public void forget(String sessionId) {
        sessions.remove(sessionId);
    }

    private void handle(Session s, String sessionId, String sandboxId, PortConnection side, EgressPolicy policy) {
        InputStream in = side.input();
        byte[] head;
        // A sandbox that connects and sends nothing must not hold a thread and a place for ever.
        ScheduledFuture<?> headTimer = later(side::close, settings.headReadTimeout().toMillis());
        if (headTimer == null) {
            return; // the manager is closing
        }
        try {
            head = readHead(in);
        } catch (IOException e) {
            return;
        } finally {
            headTimer.cancel(false);
        }
        if (head == null) {
            reply(side, 400, "Bad Request", "request head missing or larger than " + settings.headSizeCap() + " bytes");
            return;
        }
        String text = new String(head, StandardCharsets.ISO_8859_1);
        String[] lines = text.split("\r\n");
        String[] req = lines[0].split(" ");
        if (req.length != 3 || !req[2].startsWith("HTTP/1.")) {
            reply(side, 400, "Bad Request", "malformed request line");
            return;
        }
        boolean connect = req[0].equals("CONNECT");
        String authority;
        String path = null;
        int defaultPort;
        if (connect) {
            authority = req[1];
            defaultPort = -1;
        } else if (req[1].regionMatches(true, 0, "http://", 0, 7)) {
            String rest = req[1].substring(7);
            int end = rest.length();
            for (char c : new char[] {'/', '?', '#'}) {
                int i = rest.indexOf(c);
                if (i >= 0 && i < end) {
                    end = i;
                }
            }
            authority = rest.substring(0, end);
            path = end == rest.length() ? "/" : rest.substring(end);
            if (path.startsWith("?")) {
                path = "/" + path;
            }
            defaultPort = 80;
        } else {
            reply(side, 400, "Bad Request", "only CONNECT and absolute http:// requests are proxied");
            return;
        }
        String host;
        int port;
        int colon = authority.lastIndexOf(':');
        if (colon > authority.lastIndexOf(']')) {
            host = authority.substring(0, colon);
            try {
                port = Integer.parseInt(authority.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
        } else {
            host = authority;
            // An http:// URL the proxy sends on over TLS (tlsUpstream) means the host's HTTPS port.
            port = !connect && policy.tlsUpstream(host) ? 443 : defaultPort;
        }
        boolean tls = !connect && policy.tlsUpstream(host);
        if (host.isEmpty() || port < 1 || port > 65535) {
            reply(side, 400, "Bad Request", "malformed target '" + authority + "'");
            return;
        }
        Optional<String> no = policy.decide(host, port);
        if (no.isPresent()) {
            s.denied.incrementAndGet();
            listener.denied(sessionId, sandboxId, host, port, no.get());
            reply(side, 403, "Forbidden", no.get());
            return;
        }
        if (settings.maxBytesPerSession() > 0 && s.bytesIn.get() + s.bytesOut.get() >= settings.maxBytesPerSession()) {
            s.denied.incrementAndGet();
            String why = "this session moved its " + settings.maxBytesPerSession() + " bytes of egress";
            listener.denied(sessionId, sandboxId, host, port, why);
            reply(side, 403, "Forbidden", why);
            return;
        }
        List<InetAddress> addresses;
        try {
            addresses = addresses(host, port, policy);
        } catch (IOException e) {
            reply(side, 502, "Bad Gateway", "cannot resolve " + host);
            return;
        }
        if (addresses.isEmpty()) {
            s.denied.incrementAndGet();
            String why = "egress to " + host + ":" + port + " is not allowed (resolves to a local address); allowed: "
                    + policy.describe();
            listener.denied(sessionId, sandboxId, host, port, why);
            reply(side, 403, "Forbidden", why);
            return;
        }
        Socket up = null;
        boolean timedOut = false;
        for (InetAddress address : addresses) { // in the resolver's order, as a browser would
            Socket attempt = new Socket();
            try {
                attempt.connect(new InetSocketAddress(address, port), (int) settings.connectTimeout().toMillis());
                up = attempt;
                break;
            } catch (IOException e) {
                timedOut |= e instanceof SocketTimeoutException;
                closeQuietly(attempt);
            }
        }
        if (up == null) {
            if (timedOut) {
                reply(side, 504, "Gateway Timeout", "connect to " + host + ":" + port + " timed out");
            } else {
                reply(side, 502, "Bad Gateway", "cannot connect to " + host + ":" + port);
            }
            return;
        }
        if (tls) {
            try {
                up = startTls(up, host, port);
            } catch (IOException e) {
                closeQuietly(up);
                reply(side, 502, "Bad Gateway", "TLS to " + host + ":" + port + " failed: " + e.getMessage());
                return;
            }
        }
        Tunnel tunnel = new Tunnel(s, up, side);
        try (Socket upstream = up) {
            s.allowed.incrementAndGet();
            listener.allowed(sessionId, sandboxId, host, port);
            OutputStream toSandbox = side.output();
            if (connect) {
                toSandbox.write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                toSandbox.flush();
            } else {
                StringBuilder b = new StringBuilder(req[0]).append(' ').append(path).append(" HTTP/1.1\r\n");
                Map<String, String> injected = policy.headersFor(host);
                java.util.Set<String> replaced = new java.util.HashSet<>();
                injected.keySet().forEach(n -> replaced.add(n.toLowerCase(Locale.ROOT)));
                for (int i = 1; i < lines.length; i++) {
                    String name = lines[i].substring(0, Math.max(0, lines[i].indexOf(':'))).strip()
                            .toLowerCase(Locale.ROOT);
                    if (!name.startsWith("proxy-") && !name.equals("connection") && !name.equals("keep-alive")
                            && !replaced.contains(name)) {
                        b.append(lines[i]).append("\r\n");
                    }
                }
                // The credential is added here, on the host: the sandbox never sees it (its own value is dropped).
                injected.forEach((n, v) -> b.append(n).append(": ").append(v).append("\r\n"));
                b.append("Connection: close\r\n\r\n");
                upstream.getOutputStream().write(b.toString().getBytes(StandardCharsets.ISO_8859_1));
                upstream.getOutputStream().flush();
            }
            tunnel.watch();
            CountDownLatch sandboxDone = new CountDownLatch(1);
            executor.execute(() -> {
                try {
                    tunnel.copy(in, upstream.getOutputStream(), tunnel.out, s.bytesOut);
                    if (!(upstream instanceof SSLSocket)) {
                        upstream.shutdownOutput(); // TLS has no half-close; the request ends with its head
                    }
                } catch (IOException e) {
                    closeQuietly(upstream);
                } finally {
                    sandboxDone.countDown();
                }
            });
            tunnel.copy(upstream.getInputStream(), toSandbox, tunnel.in, s.bytesIn);
            // The upstream is done: the sandbox reads the end of its answer, and the other copy ends with it.
            side.shutdownOutput();
            if (!sandboxDone.await(GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                tunnel.closeBoth();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // Either side went away: closing both (finally blocks) is all there is to do.
        } finally {
            tunnel.end();
            listener.closed(sessionId, tunnel.in.get(), tunnel.out.get());
        }
    }

    /**
     * One allowed connection's bytes, its idle timeout (no byte either way for {@link Settings#tunnelIdle()}) and the
     * session's byte cap: either closes both sides, which ends both copies.
     */
    private final class Tunnel {
        final AtomicLong in = new AtomicLong();
        final AtomicLong out = new AtomicLong();
        private final Session session;
        private final Socket upstream;
        private final PortConnection side;
        private volatile long lastByte = clock.millis();
        private volatile @Nullable ScheduledFuture<?> check;

        Tunnel(Session session, Socket upstream, PortConnection side) {
            this.session = session;
            this.upstream = upstream;
            this.side = side;
        }

        void watch() {
            long every = Math.max(10, settings.tunnelIdle().toMillis() / 4);
            try {
                check = scheduler.scheduleWithFixedDelay(() -> {
                    if (clock.millis() - lastByte >= settings.tunnelIdle().toMillis()) {
                        closeBoth();
                    }
                }, every, every, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException closing) {
                closeBoth(); // the manager is closing
            }
        }

        void copy(InputStream from, OutputStream to, AtomicLong mine, AtomicLong sessionTotal) throws IOException {
            byte[] buf = new byte[32 * 1024];
            int n;
            while ((n = from.read(buf)) >= 0) {
                to.write(buf, 0, n);
                to.flush();
                mine.addAndGet(n);
                sessionTotal.addAndGet(n);
                lastByte = clock.millis();
                long cap = settings.maxBytesPerSession();
                if (cap > 0 && session.bytesIn.get() + session.bytesOut.get() > cap) {
                    closeBoth();
                    return;
                }
            }
        }

        void closeBoth() {
            closeQuietly(upstream);
            side.close();
        }

        void end() {
            ScheduledFuture<?> c = check;
            if (c != null) {
                c.cancel(false);
            }
        }
    }

    private List<InetAddress> addresses(String host, int port, EgressPolicy policy) throws IOException {
        Optional<InetAddress> literal = EgressPolicy.literal(host);
        if (literal.isPresent()) {
            return List.of(literal.get()); // the policy already allowed it through a CIDR rule
        }
        String name = host.toLowerCase(Locale.ROOT);
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1);
        }
        List<InetAddress> out = new ArrayList<>();
        for (InetAddress a : resolver.resolve(name)) {
            boolean local = a.isLoopbackAddress() || a.isAnyLocalAddress() || a.isLinkLocalAddress()
                    || a.isMulticastAddress();
            if (resolverTrusted || !local || policy.allowsAddress(a, port)) {
                out.add(a);
            }
        }
        return out;
    }

    /** Reads up to the blank line; null if the stream ends first or the head is over the cap. */
    private byte @Nullable [] readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (head.size() < settings.headSizeCap()) {
            int c = in.read();
            if (c < 0) {
                return null;
            }
            head.write(c);
            matched = (c == '\r' && matched % 2 == 0) || (c == '\n' && matched % 2 == 1) ? matched + 1 : 0;
            if (matched == 4) {
                return head.toByteArray();
            }
        }
        return null;
    }

    private static void reply(PortConnection side, int code, String status, String body) {
        byte[] b = (body + "\n").getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + code + " " + status + "\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: " + b.length + "\r\nConnection: close\r\n\r\n";
        try {
            OutputStream out = side.output();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(b);
            out.flush();
        } catch (IOException e) {
            // The sandbox side is gone; nothing to tell it.
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing only
        }
    }
}
