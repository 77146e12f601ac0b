/**
 * The Docker driver: one container per session on a Docker engine on this machine (a unix socket, or TCP: TLS, or
 * plain on loopback).
 *
 * <p>Put {@code dev.sandboxkit:sandbox-docker} on the classpath and {@link dev.sandboxkit.SandboxManager}
 * finds it through {@link dev.sandboxkit.docker.DockerDriverProvider} (name {@code docker}). Settings, given
 * with {@code SandboxManager.builder().driverProperty(..)} or as {@code -Dsandboxkit.<key>}:
 * <ul>
 *   <li>{@code docker.host}: engine address, {@code unix:///path} or {@code tcp://host:port}; default
 *       {@code DOCKER_HOST}, else the current Docker context, else the first of the rootless and rootful Docker and
 *       Podman sockets that answers a ping. {@code docker.tlsVerify}, {@code docker.certPath} (or
 *       {@code DOCKER_TLS_VERIFY}, {@code DOCKER_CERT_PATH}) and {@code docker.tlsCaCert}, {@code docker.tlsCert},
 *       {@code docker.tlsKey} make it a TLS engine, whose certificate is always verified; a certificate problem is a
 *       {@link dev.sandboxkit.docker.DockerTlsException}. Plain TCP is accepted on loopback only, and an engine on
 *       another machine is refused unless {@code docker.workdirs=volume} (host-directory workdirs).</li>
 *   <li>{@code docker.defaultUser}: {@code uid[:gid]} for sandboxes when the spec names no user and the JVM
 *       runs as root; default {@code 10001:10001}. A non-root JVM runs sandboxes as itself.</li>
 *   <li>{@code docker.pullTimeout}: how long a pull may take, seconds or ISO-8601; default 10 minutes.</li>
 *   <li>{@code docker.workdirs}: {@code host} (default), a host directory per session bind-mounted at
 *       {@code /workspace}; or {@code volume}, one named volume per session (no host path, so a remote engine is
 *       accepted), with the files API, archives, snapshots and templates through the engine's archive API.</li>
 *   <li>{@code docker.channelSetsid}: {@code false} runs command-channel commands without {@code setsid}: one
 *       exec less per command (1 to 2 ms here), but commands of a channel share its process group, so a
 *       {@code kill 0} also reaches background jobs earlier commands left; default {@code true}.</li>
 *   <li>{@code docker.channelIdleTimeout}: a command channel idle for longer is closed (its socket and
 *       selector descriptors freed) and reopened by the sandbox's next exec; seconds or ISO-8601, {@code 0}
 *       for never; default 5 minutes. Checked after execs and on the manager's orphan sweep.</li>
 * </ul>
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
 * <p>Only this package is API: {@link dev.sandboxkit.docker.DockerDriverProvider} and
 * {@link dev.sandboxkit.docker.DockerTlsException}. The driver
 * ({@code DockerSandboxDriver}: lifecycle through docker-java) wires three internal parts, none of them API:
 * <ul>
 *   <li>{@code dev.sandboxkit.docker.internal.engine}: the raw Engine API client over the socket (HTTP/1.1,
 *       the multiplexed exec stream) and plain engine execs on it;</li>
 *   <li>{@code dev.sandboxkit.docker.internal.channel}: the command channel (a long-lived shell per sandbox
 *       that runs one command after another) and the router that picks a channel or a plain exec;</li>
 *   <li>{@code dev.sandboxkit.docker.internal.files}: workdirs on the host and the files API on them
 *       (descriptor-relative syscalls through JNA, the tar codec), and the files API of a volume over a
 *       {@code VolumeAccess} it is handed;</li>
 *   <li>{@code dev.sandboxkit.docker.internal.workdir}: the two workdir backends (host directories, named volumes
 *       with their helper containers) the driver dispatches to by location.</li>
 * </ul>
 * Dependencies point one way: the driver uses all four, {@code channel} uses {@code engine}, {@code workdir} uses
 * {@code engine} and {@code files}, {@code files} uses none of them; {@code engine} throws this package's {@code DockerTlsException}, its only use of it.
 */
package dev.sandboxkit.docker;
