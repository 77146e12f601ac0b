package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Session workdirs as host directories {@code <root>/<sessionId>}, bind-mounted at /workspace.
 *
 * <p>The container can plant symlinks, FIFOs and unreadable directories in its workdir, and a symlink
 * resolves on the host. So nothing here follows links, only direct children of the root are ever renamed or
 * deleted, and whole trees are deleted and re-owned by {@link HostTrees} (descriptor-relative, no path-length
 * or depth limit).
 */
public final class HostWorkspaces {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final Logger log = LoggerFactory.getLogger(HostWorkspaces.class);

    private final Path root;
    private final String defaultUser;
    private final long jvmUid;
    private final long jvmGid;
    private final HostFiles.Staging staging;

    /**
     * The workdirs below {@code root}.
     *
     * @param root        the workspace root (created on first use, mode 0700)
     * @param defaultUser {@code uid[:gid]} for sandboxes whose spec names no user when the JVM runs as root
     */
    public HostWorkspaces(Path root, String defaultUser) {
        this.root = root.toAbsolutePath().normalize();
        this.defaultUser = defaultUser;
        long[] ids = jvmIds();
        this.jvmUid = ids[0];
        this.jvmGid = ids[1];
        this.staging = new HostFiles.Staging(this.root);
    }

    /**
     * A numeric {@code uid[:gid]} (the gid defaults to the uid). Linux ids are unsigned 32-bit, and
     * {@code 4294967295} is {@code (uid_t) -1}, which no file can be owned by.
     */
    public record Ids(long uid, long gid) {
        static final long MAX = 4294967294L;

        /**
         * Parses {@code uid} or {@code uid:gid}.
         *
         * @param user the text
         * @return the ids
         * @throws IllegalArgumentException unless {@code user} is {@code uid} or {@code uid:gid}, each 0..{@value #MAX}
         */
        public static Ids parse(String user) {
            int colon = user.indexOf(':');
            long uid = id(colon < 0 ? user : user.substring(0, colon), user);
            return new Ids(uid, colon < 0 ? uid : id(user.substring(colon + 1), user));
        }

        private static long id(String digits, String user) {
            if (digits.isEmpty() || digits.length() > 10 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw new IllegalArgumentException("user must be uid or uid:gid (numeric), got: " + user);
            }
            long id = Long.parseLong(digits);
            if (id > MAX) {
                throw new IllegalArgumentException("uids and gids are 0.." + MAX + ", got: " + user);
            }
            return id;
        }

        @Override
        public String toString() {
            return uid + ":" + gid;
        }
    }

    /**
     * The files API on a workdir (see {@link HostFiles}); only direct children of the root qualify.
     *
     * @param location the workdir
     * @param spec     the session's spec (its user owns what is written)
     * @param limits   the manager's file limits
     * @return the files API of that workdir
     */
    public SandboxFiles files(String location, SandboxSpec spec, FileLimits limits) {
        Path dir = directChild(location);
        Ids ids = ids(spec);
        return new HostFiles(dir.toString(), staging, ids.uid(), ids.gid(), jvmUid == 0, limits);
    }

    /** No caps for the archive tier: the whole workdir goes, whatever the files API's limits. */
    private static final FileLimits UNLIMITED = new FileLimits(Long.MAX_VALUE / 2, Integer.MAX_VALUE);

    /**
     * Writes a workdir as a tar stream with its links (see {@link HostFiles#exportTree}).
     *
     * @param location the workdir
     * @param spec     the session's spec
     * @param out      where the archive goes; not closed
     * @throws java.io.IOException if writing fails
     * @throws dev.sandboxkit.SandboxNotFoundException if the workdir is not on this host
     */
    public void export(String location, SandboxSpec spec, java.io.OutputStream out) throws java.io.IOException {
        directChild(location);
        if (!exists(location)) {
            throw new dev.sandboxkit.SandboxNotFoundException("workdir " + location + " does not exist on this host");
        }
        new HostFiles(directChild(location).toString(), staging, ids(spec).uid(), ids(spec).gid(), jvmUid == 0,
                UNLIMITED).exportTree(out);
    }

    /**
     * Fills a workdir from an archive written by {@link #export} (see {@link HostFiles#importTree}).
     *
     * @param location the workdir, just created
     * @param spec     the session's spec; its user owns what is written
     * @param in       the archive, read to its end and not closed
     */
    public void importInto(String location, SandboxSpec spec, java.io.InputStream in) {
        new HostFiles(directChild(location).toString(), staging, ids(spec).uid(), ids(spec).gid(), jvmUid == 0,
                UNLIMITED).importTree(in);
    }

    /**
     * The workspace root.
     *
     * @return the absolute, normalized root
     */
    public Path root() {
        return root;
    }

    /**
     * The user the container runs as: the spec's, else the JVM's own uid:gid when it is not root (so the
     * JVM can read and delete what the sandbox writes), else the unprivileged default.
     *
     * @param spec the session's spec
     * @return {@code uid:gid} for the container
     */
    public String sandboxUser(SandboxSpec spec) {
        if (spec.user() != null) {
            return Ids.parse(spec.user()).toString(); // the engine would run a bare uid in group 0
        }
        return jvmUid != 0 ? jvmUid + ":" + jvmGid : defaultUser;
    }

    /**
     * {@link #sandboxUser} as numbers.
     *
     * @param spec the session's spec
     * @return the sandbox user's ids
     */
    public Ids ids(SandboxSpec spec) {
        return Ids.parse(sandboxUser(spec));
    }

    /**
     * Creates {@code <root>/<sessionId>} (mode 0700, owned by the sandbox user). Idempotent: an existing
     * workdir of another owner is re-owned as by {@link #claim}.
     *
     * @param sessionId the session, which names the directory
     * @param spec      the session's spec
     * @return the workdir's path
     */
    public String create(String sessionId, SandboxSpec spec) {
        requireDirectoryName(sessionId);
        Ids ids = ids(spec);
        requireGrantable(ids);
        Path dir = root.resolve(sessionId);
        boolean existed = false;
        try {
            if (Files.notExists(root, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(root);
                Files.setPosixFilePermissions(root, OWNER_ONLY);
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
                Files.setPosixFilePermissions(dir, OWNER_ONLY); // the umask may have narrowed it
            } catch (FileAlreadyExistsException e) {
                existed = true;
                BasicFileAttributes a = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (a.isSymbolicLink() || !a.isDirectory()) {
                    throw new SandboxConfigurationException("workdir " + dir + " exists and is not a directory"
                            + (a.isSymbolicLink() ? " (it is a symbolic link)" : ""));
                }
            }
        } catch (IOException e) {
            throw new SandboxException("cannot create workdir " + dir + ": " + e, e);
        }
        // Otherwise the container user could not write its own workdir.
        own(dir, ids, existed);
        return dir.toString();
    }

    /**
     * Makes an existing workdir the sandbox user's before a container is started on it. When the session's
     * user changed since the workdir was last used (its top directory has another owner), every entry of the
     * previous owner is given to the new one (see {@link HostTrees#reown}); entries of other owners are left
     * alone. Only a root JVM can; otherwise the sandbox user is the JVM's own uid, which already owns it.
     *
     * @param location the workdir
     * @param spec     the session's spec
     * @throws SandboxConfigurationException if the user is not this JVM's uid and the JVM is not root
     */
    public void claim(String location, SandboxSpec spec) {
        Ids ids = ids(spec);
        requireGrantable(ids);
        own(directChild(location), ids, true);
    }

    private void requireGrantable(Ids ids) {
        if (jvmUid != 0 && ids.uid() != jvmUid) {
            throw new SandboxConfigurationException("the sandbox user " + ids + " is not this JVM's uid " + jvmUid
                    + ", and only root can give it the workdir: run as root, or leave the spec's user unset");
        }
    }

    /** Re-owns the workdir tree when its top directory's owner differs (root only; a no-op otherwise). */
    private void own(Path dir, Ids ids, boolean existed) {
        if (jvmUid != 0) {
            return;
        }
        int fd = -1;
        try {
            fd = LinuxFs.open(LinuxFs.AT_FDCWD, dir.toString().getBytes(HostFiles.PATH_CHARSET),
                    LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
            LinuxFs.Stat st = LinuxFs.stat(fd);
            if (st.uid() == ids.uid() && st.gid() == ids.gid()) {
                return;
            }
            long t0 = System.nanoTime();
            long count = HostTrees.reown(fd, st.uid(), st.gid(), ids.uid(), ids.gid(), dir.toString());
            if (existed) {
                log.info("Workdir {} re-owned from {}:{} to {} ({} entries, {} ms): the session's user changed", dir,
                        st.uid(), st.gid(), ids, count, (System.nanoTime() - t0) / 1_000_000);
            }
        } catch (LinuxFs.Errno e) {
            throw new SandboxException("cannot open workdir " + dir + " to set its owner: " + e.getMessage(), e);
        } catch (HostTrees.Failure f) {
            throw new SandboxException("cannot give workdir " + dir + " to the sandbox user " + ids + ": "
                    + f.getMessage(), f);
        } finally {
            LinuxFs.closeQuietly(fd);
        }
    }

    /**
     * Renames a pool slot's workdir to {@code <root>/<sessionId>}. A rename keeps the inode, so the bind
     * mount of the container already running on it keeps working.
     *
     * @param location  the slot's workdir
     * @param sessionId the session that takes it over
     * @return the workdir's new path
     */
    public String adopt(String location, String sessionId) {
        requireDirectoryName(sessionId);
        Path from = directChild(location);
        Path to = root.resolve(sessionId);
        if (from.equals(to)) {
            return location;
        }
        BasicFileAttributes a = attributes(from);
        if (a == null || a.isSymbolicLink() || !a.isDirectory()) {
            throw new SandboxConfigurationException("workdir " + from + " to adopt is not a directory");
        }
        if (attributes(to) != null) {
            throw new SandboxException("cannot adopt " + from + ": " + to + " already exists");
        }
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new SandboxException("cannot rename workdir " + from + " to " + to + ": " + e, e);
        }
        return to.toString();
    }

    /**
     * Whether a location is an existing real directory under the root (not a link).
     *
     * @param location the workdir
     * @return whether it exists as a directory
     */
    public boolean exists(String location) {
        BasicFileAttributes a = attributes(Path.of(location));
        return a != null && a.isDirectory() && !a.isSymbolicLink();
    }

    /**
     * Deletes a workdir and everything in it, never following a link, with no limit on path length or
     * depth (see {@link HostTrees#remove}). Idempotent.
     *
     * @param location the workdir
     * @throws SandboxException naming the workdir, the first entry that could not be deleted and the errno
     */
    public void delete(String location) {
        Path dir = directChild(location);
        int rootFd;
        try {
            rootFd = LinuxFs.open(LinuxFs.AT_FDCWD, root.toString().getBytes(HostFiles.PATH_CHARSET),
                    LinuxFs.O_PATH | LinuxFs.O_DIRECTORY);
        } catch (LinuxFs.Errno e) {
            if (e.code == LinuxFs.ENOENT) {
                return; // no root, no workdir
            }
            throw new SandboxException("cannot delete workdir " + dir + ": cannot open the workspace root: "
                    + e.getMessage(), e);
        }
        try {
            HostTrees.remove(rootFd, dir.getFileName().toString().getBytes(HostFiles.PATH_CHARSET), dir.toString());
        } catch (HostTrees.Failure f) {
            throw new SandboxException("cannot delete workdir " + dir + ": " + f.getMessage(), f);
        } finally {
            LinuxFs.closeQuietly(rootFd);
        }
    }

    /** Whether the JVM runs as root, and so gives what it creates to the sandbox user. */
    boolean jvmIsRoot() {
        return jvmUid == 0;
    }

    /**
     * Whether a location is a direct child of the root: this host's workdir, the only kind touched here.
     *
     * @param location a workdir location
     * @return whether it is directly under the root
     */
    public boolean isUnderRoot(String location) {
        return root.equals(Path.of(location).toAbsolutePath().normalize().getParent());
    }

    /** Only direct children of the root are ever renamed or deleted. */
    Path directChild(String location) {
        Path dir = Path.of(location).toAbsolutePath().normalize();
        if (!isUnderRoot(location)) {
            throw new SandboxConfigurationException("refusing to touch " + location
                    + ": it is not directly under the workspace root " + root);
        }
        return dir;
    }

    private static void requireDirectoryName(String sessionId) {
        if (sessionId.isEmpty() || sessionId.equals(".") || sessionId.equals("..") || sessionId.indexOf('/') >= 0
                || sessionId.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("session id cannot name a directory: " + sessionId);
        }
    }

    private static BasicFileAttributes attributes(Path p) {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null;
        }
    }

    /** The JVM's uid and gid: from /proc/self on Linux, else from {@code id}. */
    private static long[] jvmIds() {
        try {
            Path self = Path.of("/proc/self");
            return new long[] {Integer.toUnsignedLong((Integer) Files.getAttribute(self, "unix:uid")),
                    Integer.toUnsignedLong((Integer) Files.getAttribute(self, "unix:gid"))};
        } catch (IOException | RuntimeException e) {
            return new long[] {id("-u"), id("-g")};
        }
    }

    private static long id(String flag) {
        try {
            Process p = new ProcessBuilder("id", flag).redirectErrorStream(true).start();
            try (InputStream in = p.getInputStream()) {
                String out = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
                p.waitFor();
                return Long.parseLong(out);
            }
        } catch (IOException | NumberFormatException e) {
            throw new SandboxConfigurationException("cannot determine this JVM's uid/gid: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxConfigurationException("interrupted while determining this JVM's uid/gid", e);
        }
    }
}
