package dev.sandboxkit.docker;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * Session workdirs as host directories {@code <root>/<sessionId>}, bind-mounted at /workspace.
 *
 * <p>The container can plant symlinks, FIFOs and unreadable directories in its workdir, and a symlink
 * resolves on the host. So nothing here follows links, and only direct children of the root are ever
 * deleted.
 */
final class HostWorkspaces {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final int MAX_DELETE_PASSES = 1000;

    private final Path root;
    private final String defaultUser;
    private final int jvmUid;
    private final int jvmGid;
    private final HostFiles.Staging staging;

    HostWorkspaces(Path root, String defaultUser) {
        this.root = root.toAbsolutePath().normalize();
        this.defaultUser = defaultUser;
        int[] ids = jvmIds();
        this.jvmUid = ids[0];
        this.jvmGid = ids[1];
        this.staging = new HostFiles.Staging(this.root);
    }

    /** The files API on a workdir (see {@link HostFiles}); only direct children of the root qualify. */
    SandboxFiles files(String location, SandboxSpec spec, FileLimits limits) {
        Path dir = directChild(location);
        String user = sandboxUser(spec);
        int uid = Integer.parseInt(user.split(":", 2)[0]);
        int gid = user.contains(":") ? Integer.parseInt(user.split(":", 2)[1]) : uid;
        return new HostFiles(dir.toString(), staging, uid, gid, jvmUid == 0, limits);
    }

    Path root() {
        return root;
    }

    /**
     * The user the container runs as: the spec's, else the JVM's own uid:gid when it is not root (so the
     * JVM can read and delete what the sandbox writes), else the unprivileged default.
     */
    String sandboxUser(SandboxSpec spec) {
        if (spec.user() != null) {
            return spec.user();
        }
        return jvmUid != 0 ? jvmUid + ":" + jvmGid : defaultUser;
    }

    /** Creates {@code <root>/<sessionId>} (mode 0700, owned by the sandbox user). Idempotent. */
    String create(String sessionId, SandboxSpec spec) {
        requireDirectoryName(sessionId);
        String user = sandboxUser(spec);
        int uid = Integer.parseInt(user.split(":", 2)[0]);
        int gid = user.contains(":") ? Integer.parseInt(user.split(":", 2)[1]) : uid;
        if (jvmUid != 0 && uid != jvmUid) {
            throw new SandboxConfigurationException("the sandbox user " + user + " is not this JVM's uid " + jvmUid
                    + ", and only root can give it the workdir: run as root, or leave the spec's user unset");
        }
        Path dir = root.resolve(sessionId);
        try {
            if (Files.notExists(root, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(root);
                Files.setPosixFilePermissions(root, OWNER_ONLY);
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
                Files.setPosixFilePermissions(dir, OWNER_ONLY); // the umask may have narrowed it
            } catch (FileAlreadyExistsException e) {
                BasicFileAttributes a = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                if (a.isSymbolicLink() || !a.isDirectory()) {
                    throw new SandboxConfigurationException("workdir " + dir + " exists and is not a directory"
                            + (a.isSymbolicLink() ? " (it is a symbolic link)" : ""));
                }
            }
            if (jvmUid == 0) {
                // Otherwise the container user could not write its own workdir.
                if (((Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS)) != uid) {
                    Files.setAttribute(dir, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
                }
                if (((Integer) Files.getAttribute(dir, "unix:gid", LinkOption.NOFOLLOW_LINKS)) != gid) {
                    Files.setAttribute(dir, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
                }
            }
        } catch (IOException e) {
            throw new SandboxException("cannot create workdir " + dir + ": " + e, e);
        }
        return dir.toString();
    }

    /**
     * Renames a pool slot's workdir to {@code <root>/<sessionId>}. A rename keeps the inode, so the bind
     * mount of the container already running on it keeps working.
     */
    String adopt(String location, String sessionId) {
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
     */
    boolean exists(String location) {
        BasicFileAttributes a = attributes(Path.of(location));
        return a != null && a.isDirectory() && !a.isSymbolicLink();
    }

    /** Deletes a workdir recursively without following any link. Idempotent. */
    void delete(String location) {
        Path dir = directChild(location);
        try {
            for (int pass = 0; pass < MAX_DELETE_PASSES; pass++) {
                BasicFileAttributes a = attributes(dir);
                if (a == null) {
                    return;
                }
                if (!a.isDirectory()) {
                    Files.deleteIfExists(dir); // a link or file in the root: remove only that entry
                    return;
                }
                Remover remover = new Remover();
                // No FOLLOW_LINKS: links are visited as files and deleted as links.
                Files.walkFileTree(dir, EnumSet.noneOf(java.nio.file.FileVisitOption.class), Integer.MAX_VALUE,
                        remover);
                if (attributes(dir) != null && !remover.repaired) {
                    throw new IOException("could not delete everything under " + dir);
                }
            }
            throw new IOException("gave up deleting " + dir + " after " + MAX_DELETE_PASSES + " passes");
        } catch (IOException e) {
            throw new SandboxException("cannot delete workdir " + dir + ": " + e, e);
        }
    }

    /**
     * Deletes what it can. A directory the container made unreadable or unwritable (it owns it) is given
     * back u+rwx and the walk is repeated; root needs no such repair.
     */
    private final class Remover extends SimpleFileVisitor<Path> {
        boolean repaired;

        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
            delete(file);
            return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
            if (exc instanceof NoSuchFileException) {
                return FileVisitResult.CONTINUE;
            }
            if (exc instanceof AccessDeniedException && repair(file)) {
                return FileVisitResult.CONTINUE;
            }
            throw exc;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
            if (exc != null) {
                if (exc instanceof AccessDeniedException && repair(d)) {
                    return FileVisitResult.CONTINUE;
                }
                throw exc;
            }
            try {
                delete(d);
            } catch (DirectoryNotEmptyException e) {
                if (!repaired) {
                    throw e;
                }
            }
            return FileVisitResult.CONTINUE;
        }

        private void delete(Path p) throws IOException {
            try {
                Files.deleteIfExists(p);
            } catch (AccessDeniedException e) {
                // The parent is not writable: repair it and retry once.
                if (!repair(p.getParent())) {
                    throw e;
                }
                Files.deleteIfExists(p);
            }
        }

        private boolean repair(Path p) throws IOException {
            if (jvmUid == 0 || p == null || !p.startsWith(root) || p.equals(root)) {
                return false;
            }
            BasicFileAttributes a = attributes(p);
            if (a == null || a.isSymbolicLink() || !a.isDirectory()) {
                return false;
            }
            // Checked above without following: it is a real directory. (JDK 17's no-follow chmod opens the
            // directory first, which fails on mode 000, so this call follows; the container is gone by now.)
            Files.setPosixFilePermissions(p, OWNER_ONLY);
            repaired = true;
            return true;
        }
    }

    /** Only direct children of the root are ever renamed or deleted. */
    private Path directChild(String location) {
        Path dir = Path.of(location).toAbsolutePath().normalize();
        if (!root.equals(dir.getParent())) {
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
    private static int[] jvmIds() {
        try {
            Path self = Path.of("/proc/self");
            return new int[] {(Integer) Files.getAttribute(self, "unix:uid"), (Integer) Files.getAttribute(self, "unix:gid")};
        } catch (IOException | RuntimeException e) {
            return new int[] {id("-u"), id("-g")};
        }
    }

    private static int id(String flag) {
        try {
            Process p = new ProcessBuilder("id", flag).redirectErrorStream(true).start();
            try (InputStream in = p.getInputStream()) {
                String out = new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
                p.waitFor();
                return Integer.parseInt(out);
            }
        } catch (IOException | NumberFormatException e) {
            throw new SandboxConfigurationException("cannot determine this JVM's uid/gid: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxConfigurationException("interrupted while determining this JVM's uid/gid", e);
        }
    }
}
