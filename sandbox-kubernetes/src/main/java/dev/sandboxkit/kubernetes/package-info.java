/**
 * The Kubernetes driver: one pod per session, a PersistentVolumeClaim per session as the durable workdir,
 * execs over the pod exec API.
 *
 * <p>Select it with {@code SandboxManager.builder().driver("kubernetes")}, or pass an instance built with
 * {@link dev.sandboxkit.kubernetes.KubernetesSandboxDriver#builder()}. The provider
 * {@link dev.sandboxkit.kubernetes.KubernetesDriverProvider} lists the settings it reads.
 *
 * <p>Layout: the public driver class holds the options and delegates to its two halves, {@code PodSandboxes}
 * (compute: pods, network policies, execs, terminals, port forwards; with {@code PodExec}, {@code PodTerminal},
 * {@code PodStartup}) and {@code ClaimWorkspaces} (storage: the workspace claims). {@code Manifests} builds
 * the objects they create.
 *
 * <p>How execs work, because the exec API lacks per-exec env, a working directory and stdin EOF: every
 * command runs under a short POSIX shell wrapper (so the image needs {@code /bin/sh}) that reads the
 * per-exec env from the private stdin channel (never from the URL, which API servers log), changes
 * directory, feeds the command exactly the stdin bytes sent (giving it EOF), and tags every process with
 * {@code SANDBOXKIT_EXEC_ID}. A timed-out exec is killed by a second exec that SIGKILLs every tagged
 * process, its descendants and the process groups they lead. Output listeners run on a fabric8 client
 * thread, one call at a time per exec.
 */
package dev.sandboxkit.kubernetes;
