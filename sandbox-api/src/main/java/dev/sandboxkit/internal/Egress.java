package dev.sandboxkit.internal;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.EgressUsage;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxEvent;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.ComputeDriver;
import dev.sandboxkit.spi.EgressResolver;
import dev.sandboxkit.spi.SessionRecord;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.LongAdder;

/**
 * A manager's egress: the policy each session has now, the host-side proxy that checks it, and the transport that
 * carries each connection a sandbox opens to its proxy endpoint to that proxy. The policy of a session is its
 * spec's, until {@link dev.sandboxkit.SandboxManager#updateEgress} stores another on the session (attribute
 * {@value #ATTR_POLICY}); an acquire with a different spec starts over from that spec's.
 */
final class Egress {
    private static final Logger log = LoggerFactory.getLogger(Egress.class);
    /** The session's policy set by updateEgress, encoded; {@value #OFF} for none. */
    static final String ATTR_POLICY = "egress.policy";
    private static final String OFF = "off";

    private final EgressProxy proxy;
    private final EgressTransport transport;
    private final Events events;
    private final Clock clock;
    private final Map<String, EgressPolicy> live = new ConcurrentHashMap<>();
    final LongAdder allowed = new LongAdder();
    final LongAdder denied = new LongAdder();
    final LongAdder bytesIn = new LongAdder();
    final LongAdder bytesOut = new LongAdder();

    Egress(ComputeDriver compute, Executor io, ScheduledExecutorService scheduler, Clock clock,
           @Nullable EgressResolver resolver, SandboxConfig config, Events events) {
        this.events = events;
        this.clock = clock;
        EgressProxy.Settings d = EgressProxy.Settings.DEFAULTS;
        EgressProxy.Settings settings = new EgressProxy.Settings(config.getEgressMaxConnections(), d.maxTotal(),
                d.headReadTimeout(), d.headSizeCap(), config.getEgressConnectTimeout(), config.getEgressIdleTimeout(),
                config.getEgressMaxBytes());
        this.proxy = new EgressProxy(settings, io, scheduler, clock, resolver, new Counting());
        EgressTransport.Settings ports = EgressTransport.Settings.DEFAULTS;
        // Joined relays beyond the proxy's own limit would only be refused: room for the refusals, no more.
        this.transport = new EgressTransport(compute, io, new EgressTransport.Settings(ports.endpointPort(),
                ports.joinPort(), ports.controlPort(), 2 * config.getEgressMaxConnections()));
    }

    /** The environment that points a sandbox's tools at its proxy endpoint. */
    static Map<String, String> environment() {
        return EgressTransport.proxyEnvironment(EgressTransport.Settings.DEFAULTS);
    }

    /**
     * The policy a session has: the one {@code updateEgress} stored on it, else its spec's.
     *
     * @return the policy, or {@code null} for no egress
     */
    static @Nullable EgressPolicy policyOf(SessionRecord rec, SandboxSpec spec) {
        String stored = rec.attributes().get(ATTR_POLICY);
        if (stored == null) {
            return spec.egress();
        }
        return stored.equals(OFF) ? null : SpecCodec.decodeEgress(stored);
    }

    /** A session acquired with another spec starts over from that spec's policy. */
    static SessionRecord specChanged(SessionRecord rec) {
        if (!rec.attributes().containsKey(ATTR_POLICY)) {
            return rec;
        }
        Map<String, String> attributes = new java.util.HashMap<>(rec.attributes());
        attributes.remove(ATTR_POLICY);
        return rec.withAttributes(attributes);
    }

    /** The attribute value that stores a policy on a session. */
    static String encode(@Nullable EgressPolicy policy) {
        return policy == null ? OFF : SpecCodec.encodeEgress(policy);
    }

    /**
     * Starts the sandbox's proxy endpoint, whose connections are checked against the session's live policy.
     * Lifecycle lock held; throws (the caller removes the container) if the image cannot run the endpoint.
     */
    void start(String sessionId, String sandboxId, EgressPolicy policy) {
        live.put(sessionId, policy);
        transport.start(sandboxId, connection -> proxy.serve(sessionId, sandboxId, connection,
                () -> live.getOrDefault(sessionId, EgressPolicy.denyAll())));
        log.debug("Session {}: egress endpoint up in {}, allowing {}", sessionId, sandboxId, policy.describe());
    }

    /** Starts a warm-pool slot's endpoint, with its spec's fixed policy, until a checkout restarts it. */
    void startSlot(String slotId, String sandboxId, EgressPolicy policy) {
        transport.start(sandboxId, connection -> proxy.serve(slotId, sandboxId, connection, () -> policy));
    }

    /** A slot was handed to a session: its counts go. */
    void forgetSlot(String slotId) {
        proxy.forget(slotId);
    }

    /** The session's policy changed: the next connection is checked against {@code policy} (none: deny all). */
    void update(String sessionId, @Nullable EgressPolicy policy) {
        live.put(sessionId, policy == null ? EgressPolicy.denyAll() : policy);
    }

    /** The session's container is gone: its reader ends. */
    void containerGone(String sandboxId) {
        transport.stop(sandboxId);
    }

    /** The session is destroyed. */
    void forget(String sessionId) {
        live.remove(sessionId);
        proxy.forget(sessionId);
    }

    /** What the session did through the proxy, since this manager started. */
    EgressUsage usage(String sessionId) {
        EgressProxy.Counters c = proxy.counters(sessionId);
        return new EgressUsage(c.allowed(), c.denied(), c.bytesIn(), c.bytesOut());
    }

    /** Stops every reader; the proxy's connections end with the executor. */
    void close() {
        transport.close();
    }

    /** Counts for the manager's stats and turns refusals into events. Called on the I/O thread of a connection. */
    private final class Counting implements EgressProxy.Listener {
        @Override
        public void denied(String sessionId, String sandboxId, String host, int port, String reason) {
            denied.increment();
            log.debug("Session {}: egress to {}:{} refused: {}", sessionId, host, port, reason); // the sandbox can repeat it
            events.emit(new SandboxEvent.EgressDenied(sessionId, sandboxId, clock.instant(), host, port, reason));
        }

        @Override
        public void allowed(String sessionId, String sandboxId, String host, int port) {
            allowed.increment();
        }

        @Override
        public void closed(String sessionId, long in, long out) {
            bytesIn.add(in);
            bytesOut.add(out);
        }
    }
}
