/**
 * The Docker driver's own Engine API client: one HTTP/1.1 connection per request over the engine socket with every
 * wait under a deadline ({@code EngineConnection}, its answers parsed by {@code ResponseReader}), pooled keep-alive
 * calls and the exec start that upgrades its connection to the raw stream ({@code EngineClient}), the engine's
 * multiplexed stdout/stderr framing ({@code StreamDemux}), and the plain exec path on top: create, start, stream
 * and inspect ({@code EngineExec}, {@code ExecOutput}), kill by marker ({@code ExecKiller}); the control calls
 * (containers, volumes, images, logs) on the same client ({@code EngineControl}, the create bodies in
 * {@code ContainerBody}, bodies too large for memory streamed by {@code EngineBody}). {@code DockerHost} is the
 * engine's address, found by {@code EngineDiscovery}; a TLS engine's material ({@code EngineTls}, PEM read by
 * {@code PemKeys}) serves this client, which speaks TLS through an {@code SSLEngine} on its non-blocking channel
 * ({@code TlsWire}). The response parser holds every answer to fixed limits (see {@code ResponseReader}): a broken
 * or hostile endpoint gets a {@link dev.sandboxkit.SandboxExecException}, never unbounded memory. How a refusal is
 * read (status first, text only where the engine gives nothing finer) is in one table: {@code EngineErrors}.
 *
 * <h2>Which client carries the control calls: this one</h2>
 * Execs need this client (docker-java never half-closes stdin, and the command channel has its own framing). For
 * the other calls (create, start, inspect, remove, list, info, volumes, pause) the choice was measured
 * ({@code ControlClientBench} in the tests, N = 200 per call and client, interleaved call by call, second of two
 * rounds, Docker 20.10.24 on runc over the unix socket, 2-core VM at load average ~15 from other builds, 2026-12-04):
 * <pre>
 *   call            docker-java p50 / p99     own client p50 / p99
 *   inspect           1.88 / 28.8 ms            1.10 / 19.6 ms
 *   info             29.8  / 75.6 ms           29.3  / 108.6 ms
 *   list by label     1.25 /  7.7 ms            0.61 /  3.8 ms
 *   create + remove  65.3  / 173 ms            71.5  / 176 ms
 * </pre>
 * Where the engine does the work (info, create, remove) the clients are alike; where it does little (inspect,
 * list) docker-java's object mapping doubles the time. Speed does not decide it; correctness and cost do:
 * <ul>
 *   <li>Podman: docker-java cannot parse Podman's container inspect ({@code HostConfig.Binds} as
 *       {@code src:/workspace:rw,rprivate,rbind}) and fails on a bind source with a ':' in it; this client reads
 *       the JSON it needs.</li>
 *   <li>Fields docker-java drops: a volume's {@code CreatedAt} (the orphan sweep's age), Podman's
 *       {@code DefaultRuntime}.</li>
 *   <li>Deadlines: every call here has one (a files call's pause and unpause must not hang); docker-java has a
 *       client-wide response timeout only.</li>
 *   <li>Errors: the status and the JSON {@code message} come straight from the answer, one way for every call.</li>
 *   <li>Cost: this client is needed anyway for execs (about 2,500 lines with TLS and discovery); docker-java is
 *       about 3.1 MB of jars (api, core, zerodep transport), and TLS through it already needs this package's
 *       {@code SSLContext}.</li>
 * </ul>
 * So every control call is on this client: the driver makes all its engine calls through this one client.
 * First info (Podman), container inspect, the volume listing with creation times, pause and unpause moved here;
 * then, once the driver was split into its compute and workspace halves, the rest: the sandbox container's create,
 * start, remove and list, ping, logs, image inspect and pull, every volume call, and the volume helpers' create,
 * start, wait, logs and archive copies (streamed both ways, each read and write under an idle deadline). The create
 * bodies carry the fields docker-java sent (compared on the wire). docker-java is no longer a dependency of the
 * driver; its tests still use it, as a client independent of the one under test.
 *
 * <p>Not API: public types here are public only so that the driver and {@code internal.channel} can use them,
 * and may change in any release. A module descriptor will not export this package.
 */
package dev.sandboxkit.docker.internal.engine;
