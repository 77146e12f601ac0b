package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.SandboxLabels;
import dev.sandboxkit.spi.SnapshotDescriptor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Workdir snapshots as host directories {@code <root>/.snapshots/<id>/tree}, beside a {@code snapshot.properties}
 * with the labels, creation time and size (written last, atomically: a snapshot without it is unfinished and
 * ignored). {@code .snapshots} cannot be a session's workdir: session ids start with a letter or a digit. The
 * sandboxes never see this directory: only their own workdir is mounted. Copies go through {@link TreeCopy}, so
 * nothing a sandbox planted is followed, on the way in or out.
 */
public final class HostSnapshots {
    static final String DIR = ".snapshots";
    private static final String TREE = "tree";
    private static final String META = "snapshot.properties";
    private static final String LABEL = "label.";
    private static final Pattern NAME = Pattern.compile("snap-[a-z0-9-]{1,64}");
    private static final Logger log = LoggerFactory.getLogger(HostSnapshots.class);

    private final HostWorkspaces workspaces;
    private final Path dir;
    private final Trash trash;

    /**
     * Snapshots of the workdirs under {@code workspaces}' root.
     *
     * @param workspaces the workdirs
     */
    public HostSnapshots(HostWorkspaces workspaces) {
        this.workspaces = workspaces;
        this.dir = workspaces.root().resolve(DIR);
        this.trash = new Trash(workspaces.root());
        trash.sweep(); // what an earlier driver on this root left
    }

    /**
     * Copies a workdir into a new snapshot named by its {@link SandboxLabels#SNAPSHOT} label.
     *
     * @param workspace the workdir
     * @param labels    the snapshot's labels
     * @return the snapshot
     */
    public SnapshotDescriptor snapshot(String workspace, Map<String, String> labels) {
        Path source = workspaces.directChild(workspace);
        String id = labels.get(SandboxLabels.SNAPSHOT);
        if (id == null || !NAME.matcher(id).matches()) {
            throw new IllegalArgumentException("a snapshot needs a " + SandboxLabels.SNAPSHOT + " label, got: " + id);
        }
        Path snapshot = dir.resolve(id);
        try {
            Files.createDirectories(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            Files.createDirectory(snapshot, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Files.createDirectory(snapshot.resolve(TREE), PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new SandboxException("cannot create snapshot " + snapshot + ": " + e, e);
        }
        boolean done = false;
        try {
            long t0 = System.nanoTime();
            TreeCopy.Result copied = copy(source, snapshot.resolve(TREE), -1, -1, false);
            Instant created = Instant.now();
            writeMeta(snapshot, labels, created, copied.bytes());
            done = true;
            log.info("Snapshot {} of workdir {}: {} entries, {} bytes in {} ms", id, source, copied.entries(),
                    copied.bytes(), (System.nanoTime() - t0) / 1_000_000);
            return new SnapshotDescriptor(snapshot.toString(), labels, created, copied.bytes());
        } finally {
            if (!done) {
                delete(snapshot.toString());
            }
        }
    }

    /**
     * Replaces a workdir's content with a copy of a snapshot or of another workdir, given to the spec's user.
     *
     * @param source    a snapshot's location or a workdir's
     * @param workspace the workdir to fill
     * @param spec      the spec of the session that owns it
     */
    public void restore(String source, String workspace, SandboxSpec spec) {
        replace(sourceTree(source), workspace, spec, source);
    }

    /**
     * Replaces a workdir's content with a copy of a host directory (a spec's template), given to the spec's user.
     * The directory is opened with {@code O_NOFOLLOW}, so a template that is itself a link is refused.
     *
     * @param directory the template directory
     * @param workspace the workdir to fill
     * @param spec      the spec of the session or slot that owns it
     * @throws SandboxConfigurationException if the directory does not exist, is a link or is not a directory
     */
    public void seed(Path directory, String workspace, SandboxSpec spec) {
        Path from = directory.toAbsolutePath().normalize();
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(from, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new SandboxConfigurationException("template directory " + from + " does not exist or cannot be read: "
                    + e, e);
        }
        if (!a.isDirectory()) {
            throw new SandboxConfigurationException("template " + from + " is not a directory"
                    + (a.isSymbolicLink() ? " (it is a symbolic link, which is never followed)" : ""));
        }
        try {
            replace(from, workspace, spec, from.toString());
        } catch (SandboxNotFoundException gone) {
            throw new SandboxConfigurationException("template directory " + from + " does not exist", gone);
        }
    }

    private void replace(Path from, String workspace, SandboxSpec spec, String source) {
        Path target = workspaces.directChild(workspace);
        HostWorkspaces.Ids ids = workspaces.ids(spec);
        int fd = -1;
        try {
            fd = LinuxFs.open(LinuxFs.AT_FDCWD, bytes(target), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
            // Set aside (a rename each) and deleted in the background: deleting costs about what the copy does.
            for (byte[] name : trash.discard(fd, LinuxFs.names(fd, Integer.MAX_VALUE - 1))) {
                HostTrees.remove(fd, name, HostTrees.printable(name));
            }
        } catch (LinuxFs.Errno e) {
            throw new SandboxException("cannot empty workdir " + target + " to restore into it: " + e.getMessage(), e);
        } catch (HostTrees.Failure f) {
            throw new SandboxException("cannot empty workdir " + target + " to restore into it: " + f.getMessage(), f);
        } finally {
            LinuxFs.closeQuietly(fd);
        }
        long t0 = System.nanoTime();
        TreeCopy.Result copied = copy(from, target, ids.uid(), ids.gid(), workspaces.jvmIsRoot());
        log.info("Workdir {} restored from {}: {} entries, {} bytes in {} ms", target, source, copied.entries(),
                copied.bytes(), (System.nanoTime() - t0) / 1_000_000);
    }

    /** Deletes set-aside workdir content that is left (see {@link Trash}). */
    public void sweep() {
        trash.sweep();
    }

    /** Waits for the deletions of set-aside workdir content under way. */
    public void close() {
        trash.close();
    }

    /**
     * The finished snapshots whose labels include all of the given ones.
     *
     * @param selector labels to match
     * @return the snapshots
     */
    public List<SnapshotDescriptor> list(Map<String, String> selector) {
        List<SnapshotDescriptor> found = new ArrayList<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return found;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path snapshot : entries) {
                if (!NAME.matcher(snapshot.getFileName().toString()).matches()) {
                    continue;
                }
                SnapshotDescriptor d = read(snapshot);
                if (d != null && d.labels().entrySet().containsAll(selector.entrySet())) {
                    found.add(d);
                }
            }
        } catch (IOException e) {
            throw new SandboxException("cannot list snapshots in " + dir + ": " + e, e);
        }
        return found;
    }

    /**
     * Replaces a snapshot's labels.
     *
     * @param location the snapshot
     * @param labels   its labels
     */
    public void label(String location, Map<String, String> labels) {
        Path snapshot = snapshotDir(location);
        SnapshotDescriptor d = read(snapshot);
        if (d == null) {
            throw new SandboxNotFoundException("no snapshot at " + location);
        }
        writeMeta(snapshot, labels, d.createdAt(), d.sizeBytes());
    }

    /**
     * Deletes a snapshot. Idempotent.
     *
     * @param location the snapshot
     */
    public void delete(String location) {
        Path snapshot = snapshotDir(location);
        int fd;
        try {
            fd = LinuxFs.open(LinuxFs.AT_FDCWD, bytes(dir), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
        } catch (LinuxFs.Errno e) {
            if (e.code == LinuxFs.ENOENT) {
                return;
            }
            throw new SandboxException("cannot delete snapshot " + snapshot + ": " + e.getMessage(), e);
        }
        try {
            HostTrees.remove(fd, bytes(snapshot.getFileName()), snapshot.getFileName().toString());
        } catch (HostTrees.Failure f) {
            throw new SandboxException("cannot delete snapshot " + snapshot + ": " + f.getMessage(), f);
        } finally {
            LinuxFs.closeQuietly(fd);
        }
    }

    private Path sourceTree(String source) {
        Path p = Path.of(source).toAbsolutePath().normalize();
        if (dir.equals(p.getParent())) {
            if (read(p) == null) {
                throw new SandboxNotFoundException("no snapshot at " + source);
            }
            return p.resolve(TREE);
        }
        return workspaces.directChild(source);
    }

    private Path snapshotDir(String location) {
        Path p = Path.of(location).toAbsolutePath().normalize();
        if (!dir.equals(p.getParent()) || !NAME.matcher(p.getFileName().toString()).matches()) {
            throw new IllegalArgumentException("not a snapshot location: " + location);
        }
        return p;
    }

    private static TreeCopy.Result copy(Path from, Path to, long uid, long gid, boolean chown) {
        int src = -1;
        int dst = -1;
        try {
            src = LinuxFs.open(LinuxFs.AT_FDCWD, bytes(from), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
            dst = LinuxFs.open(LinuxFs.AT_FDCWD, bytes(to), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
            return TreeCopy.copy(src, dst, uid, gid, chown);
        } catch (LinuxFs.Errno e) {
            if (e.code == LinuxFs.ENOENT) {
                throw new SandboxNotFoundException("cannot copy " + from + ": it does not exist");
            }
            throw new SandboxException("cannot copy " + from + " to " + to + ": " + e.getMessage(), e);
        } catch (HostTrees.Failure f) {
            throw new SandboxException("cannot copy " + from + " to " + to + ": " + f.getMessage(), f);
        } finally {
            LinuxFs.closeQuietly(src);
            LinuxFs.closeQuietly(dst);
        }
    }

    private static void writeMeta(Path snapshot, Map<String, String> labels, Instant created, long size) {
        Properties p = new Properties();
        labels.forEach((k, v) -> p.setProperty(LABEL + k, v));
        p.setProperty("created", created.toString());
        p.setProperty("size", Long.toString(size));
        Path temp = snapshot.resolve(META + "." + UUID.randomUUID() + ".tmp");
        try {
            try (OutputStream out = Files.newOutputStream(temp)) {
                p.store(out, null);
            }
            Files.move(temp, snapshot.resolve(META), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new SandboxException("cannot write " + snapshot.resolve(META) + ": " + e, e);
        }
    }

    /** The snapshot's description, or null while it is unfinished (or gone). */
    private static SnapshotDescriptor read(Path snapshot) {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(snapshot.resolve(META), LinkOption.NOFOLLOW_LINKS)) {
            p.load(in);
        } catch (IOException e) {
            return null;
        }
        Map<String, String> labels = new HashMap<>();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith(LABEL)) {
                labels.put(key.substring(LABEL.length()), p.getProperty(key));
            }
        }
        try {
            return new SnapshotDescriptor(snapshot.toString(), labels, Instant.parse(p.getProperty("created")),
                    Long.parseLong(p.getProperty("size")));
        } catch (RuntimeException malformed) {
            return null;
        }
    }

    private static byte[] bytes(Path p) {
        return p.toString().getBytes(HostFiles.PATH_CHARSET);
    }
}
