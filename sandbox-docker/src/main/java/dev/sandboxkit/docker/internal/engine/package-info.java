/**
 * The Docker driver's own Engine API client, used for execs only (docker-java does the lifecycle): one
 * HTTP/1.1 connection per request over the engine socket with every wait under a deadline
 * ({@code EngineConnection}), pooled keep-alive calls and the exec start that upgrades its connection to the
 * raw stream ({@code EngineClient}), the engine's multiplexed stdout/stderr framing ({@code StreamDemux}), and
 * the plain exec path on top: create, start, stream, inspect, kill by marker ({@code EngineExec},
 * {@code ExecOutput}). {@code DockerHost} is the engine's address, found by {@code EngineDiscovery}; a TLS engine's
 * material ({@code EngineTls}, PEM read by {@code PemKeys}) serves both docker-java and this client, which speaks TLS
 * through an {@code SSLEngine} on its non-blocking channel ({@code TlsWire}). The response parser holds every answer to
 * fixed limits (see {@code EngineConnection}): a broken or hostile endpoint gets a
 * {@link dev.sandboxkit.SandboxExecException}, never unbounded memory.
 *
 * <p>Not API: public types here are public only so that the driver and {@code internal.channel} can use them,
 * and may change in any release. A module descriptor will not export this package.
 */
package dev.sandboxkit.docker.internal.engine;
