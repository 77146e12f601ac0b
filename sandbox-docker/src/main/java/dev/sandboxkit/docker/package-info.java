/**
 * The Docker driver: one container per session on a Docker engine on this machine (a unix socket, or TCP: TLS, or
 * plain on loopback).
 *
 * <p>Put {@code dev.sandboxkit:sandbox-docker} on the classpath and {@link dev.sandboxkit.SandboxManager}
 * finds it through {@link dev.sandboxkit.docker.DockerDriverProvider} (name {@code docker}). Its settings are
 * {@link dev.sandboxkit.docker.DockerSettings}: {@code docker.*} keys given with
 * {@code SandboxManager.builder().driverProperty(..)}, a {@link dev.sandboxkit.SandboxConfig} or as
 * {@code -Dsandboxkit.<key>}, or typed with {@code DockerSettings.builder()} (its {@code toProperties()} are those
 * keys). {@link dev.sandboxkit.docker.DockerSettings#keys()} lists them, with defaults and meanings: the engine
 * ({@code docker.host}, else {@code DOCKER_HOST}, the current Docker context, the first local socket that answers;
 * TLS with {@code docker.tlsVerify}, {@code docker.certPath}, {@code docker.tlsCaCert}, {@code docker.tlsCert},
 * {@code docker.tlsKey}, the engine's certificate always verified, a certificate problem a
 * {@link dev.sandboxkit.docker.DockerTlsException}; plain TCP on loopback only), {@code docker.defaultUser},
 * {@code docker.pullTimeout}, {@code docker.workdirs} ({@code host} or {@code volume}, which a remote engine needs),
 * {@code docker.channelSetsid} and {@code docker.channelIdleTimeout}. An unknown {@code docker.*} key is a
 * configuration error that names it.
 *
 * <p>Each workdir is a host directory {@code <workspaceRoot>/<sessionId>} (mode 0700, owned by the sandbox
 * user) bind-mounted at {@code /workspace}. Execs run on the sandbox's command channel (see
 * {@code ExecChannels}, {@link dev.sandboxkit.ExecMode}) or as plain engine execs; either way the output is
 * read on the thread that calls {@code exec}, and listeners are called there. Every exec carries the
 * environment variable {@code SANDBOXKIT_EXEC_ID}: on a timeout, the processes holding it are killed with
 * their process groups.
 *
 * <p>Podman's Docker-compatible service ({@code podman system service}) works as the engine: point
 * {@code docker.host} at its socket. The driver detects it and handles where its answers differ (exec inspect,
 * start failures, container inspect, the runtime it ignores); see docs/docker.md, "Podman".
 *
 * <p>Only this package is API: {@link dev.sandboxkit.docker.DockerDriverProvider},
 * {@link dev.sandboxkit.docker.DockerSettings} and {@link dev.sandboxkit.docker.DockerTlsException}. The driver
 * ({@code DockerSandboxDriver}) wires its internal parts, none of them API, and makes every engine call through one
 * client of its own ({@code internal.engine.EngineClient}):
 * <ul>
 *   <li>{@code dev.sandboxkit.docker.internal.compute}: the compute half, the sandbox containers (create from the
 *       spec, the image inspected or pulled, start, remove, list) and the execs, terminals and tunnels in them;</li>
 *   <li>{@code dev.sandboxkit.docker.internal.engine}: the raw Engine API client over the socket (HTTP/1.1,
 *       the multiplexed exec stream) and plain engine execs on it;</li>
 *   <li>{@code dev.sandboxkit.docker.internal.channel}: the command channel (a long-lived shell per sandbox
 *       that runs one command after another) and the router that picks a channel or a plain exec;</li>
 *   <li>{@code dev.sandboxkit.docker.internal.files}: workdirs on the host and the files API on them
 *       (descriptor-relative syscalls through JNA, the tar codec), and the files API of a volume over a
 *       {@code VolumeAccess} it is handed;</li>
 *   <li>{@code dev.sandboxkit.docker.internal.workdir}: the two workdir backends (host directories, named volumes
 *       with their helper containers) and the workspace half ({@code DockerWorkspaces}) that dispatches to them by
 *       location;</li>
 *   <li>{@code dev.sandboxkit.docker.internal.settings}: the {@code docker.*} key table that reads the keys into
 *       {@code DockerSettings} and lists them.</li>
 * </ul>
 * Dependencies point one way: the driver uses all six, {@code compute} uses {@code channel}, {@code engine} and
 * {@code workdir} (a workdir's mount), {@code channel} uses {@code engine}, {@code workdir} uses
 * {@code engine} and {@code files}, {@code engine} uses {@code settings}, {@code files} and {@code settings} use
 * none of them; {@code engine} throws this package's {@code DockerTlsException} and reads its
 * {@code DockerSettings}, its only uses of it.
 */
package dev.sandboxkit.docker;
