/**
 * Session workdirs on the host and the files API on them, done on the bind-mounted directory without a
 * container: {@code HostWorkspaces} creates, claims, adopts and deletes workdirs; {@code HostFiles} is the
 * {@link dev.sandboxkit.SandboxFiles} of one workdir (its class documentation says how it defends against what
 * the container planted), walking down with {@code HostWalk} and writing through {@code HostPlacer};
 * {@code VolumeFiles} is the same for a named-volume workdir, through the engine's archive API, with
 * {@code VolumePaths} (checked walks and {@code PUT}s), {@code VolumeUpload} (uploads and imports) and
 * {@code VolumeOwner} (re-owning); {@code FileRules} holds what both backends apply (paths, entry names, modes,
 * limits, errors) and {@code TarExtractor} is their one tar extractor, each backend only placing what it
 * accepted; {@code HostTrees} removes and re-owns whole trees; {@code LinuxFs} binds the descriptor-relative
 * system calls the JDK lacks through JNA; {@code TarFormat} reads and writes tar headers and
 * {@code TarDownload} streams downloaded archives.
 *
 * <p>Not API: {@code HostWorkspaces} is public only so that the driver can use it, and may change in any
 * release. A module descriptor will not export this package.
 */
package dev.sandboxkit.docker.internal.files;
