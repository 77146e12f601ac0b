/**
 * The Docker driver's compute half: the sandbox containers and what runs in them. {@code DockerCompute} creates a
 * container from the spec (through {@code DockerImages}, which inspects or pulls its image), starts it and watches
 * until {@code sleep} runs, removes and lists containers, and hands execs, terminals and port tunnels to
 * {@code internal.channel} and {@code internal.engine}. The workspace half (workdirs, snapshots, archives, files)
 * is {@code internal.workdir.DockerWorkspaces}; the driver class joins the two.
 *
 * <p>Not API: {@code DockerCompute} is public only so that the driver can use it, and may change in any release.
 * A module descriptor will not export this package.
 */
package dev.sandboxkit.docker.internal.compute;
