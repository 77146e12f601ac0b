package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.docker.internal.files.LinuxFs.Errno;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Workdir content set aside to be deleted off the caller's path. Deleting a tree of many small files costs about
 * as much as copying it on this kind of disk (B13: {@code rm -rf} of 12,800 files took 4-6 s here), so a restore
 * moves the old entries into a new bin {@code <root>/.trash/<bin>} (one rename per top-level entry, on the same
 * file system) and returns while one daemon thread deletes the bin, through {@link HostTrees#remove} as every
 * deletion here. No sandbox mounts {@code .trash} (session ids start with a letter or a digit).
 *
 * <p>A bin whose deletion failed, or that a crashed driver left, is deleted by a later {@link #sweep()}: this
 * driver's own at once, those of other drivers sharing the root once an hour old (one of them may be deleting it
 * right now). {@link #close()} waits for the deletions under way.
 */
final class Trash implements AutoCloseable {
    static final String DIR = ".trash";
    private static final long FOREIGN_AGE_SECONDS = 3600;
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final Logger log = LoggerFactory.getLogger(Trash.class);

    private final Path dir;
    /** Bins this driver made and has not deleted yet. */
    private final Set<String> mine = ConcurrentHashMap.newKeySet();
    /** Bins queued or being deleted now. */
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    private final ThreadPoolExecutor deleter;

    /**
     * The trash of a workspace root.
     *
     * @param root the workspace root
     */
    Trash(Path root) {
        this.dir = root.resolve(DIR);
        this.deleter = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "sandboxkit-trash-" + THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        deleter.allowCoreThreadTimeOut(true); // no thread while there is nothing to delete
    }

    /**
     * Moves entries of a directory into a new bin and schedules the bin's deletion.
     *
     * @param from  the directory (a descriptor; O_PATH is fine)
     * @param names the entries to move
     * @return the names that could not be moved (another file system, no trash): delete those in place
     */
    List<byte[]> discard(int from, List<byte[]> names) {
        if (names.isEmpty()) {
            return names;
        }
        String bin = UUID.randomUUID().toString();
        int binFd = -1;
        List<byte[]> left = new ArrayList<>();
        try {
            binFd = newBin(bin);
            mine.add(bin);
            for (byte[] name : names) {
                try {
                    LinuxFs.rename(from, name, binFd, name);
                } catch (Errno e) {
                    if (e.code != LinuxFs.ENOENT) { // ENOENT: gone already
                        left.add(name);
                    }
                }
            }
        } catch (Errno e) {
            log.debug("No trash in {} ({}); deleting in place", dir, e.getMessage());
            return names;
        } finally {
            LinuxFs.closeQuietly(binFd);
        }
        schedule(bin);
        return left;
    }

    private int newBin(String bin) throws Errno {
        int rootFd = LinuxFs.open(LinuxFs.AT_FDCWD, bytes(dir.getParent()), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY);
        try {
            try {
                LinuxFs.mkdir(rootFd, bytes(dir.getFileName()), 0700);
            } catch (Errno e) {
                if (e.code != LinuxFs.EEXIST) {
                    throw e;
                }
            }
            int trashFd = LinuxFs.open(rootFd, bytes(dir.getFileName()),
                    LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
            try {
                LinuxFs.mkdir(trashFd, bytes(bin), 0700);
                return LinuxFs.open(trashFd, bytes(bin), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
            } finally {
                LinuxFs.closeQuietly(trashFd);
            }
        } finally {
            LinuxFs.closeQuietly(rootFd);
        }
    }

    /** Schedules the deletion of this driver's bins that are left, and of other drivers' old ones. */
    void sweep() {
        int trashFd;
        try {
            trashFd = LinuxFs.open(LinuxFs.AT_FDCWD, bytes(dir), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
        } catch (Errno e) {
            return; // no trash yet
        }
        try {
            long now = System.currentTimeMillis() / 1000;
            for (byte[] name : LinuxFs.names(trashFd, 100_000)) {
                String bin = new String(name, HostFiles.PATH_CHARSET);
                if (mine.contains(bin) || now - LinuxFs.lstat(trashFd, name).mtimeSeconds() > FOREIGN_AGE_SECONDS) {
                    schedule(bin);
                }
            }
        } catch (Errno e) {
            log.debug("Cannot sweep {}: {}", dir, e.getMessage());
        } finally {
            LinuxFs.closeQuietly(trashFd);
        }
    }

    private void schedule(String bin) {
        if (!pending.add(bin)) {
            return;
        }
        try {
            deleter.execute(() -> delete(bin));
        } catch (RejectedExecutionException closed) {
            pending.remove(bin); // closing: the next driver's sweep deletes it
        }
    }

    private void delete(String bin) {
        long t0 = System.nanoTime();
        int trashFd = -1;
        try {
            trashFd = LinuxFs.open(LinuxFs.AT_FDCWD, bytes(dir), LinuxFs.O_PATH | LinuxFs.O_DIRECTORY | LinuxFs.O_NOFOLLOW);
            HostTrees.remove(trashFd, bytes(bin), DIR + "/" + bin);
            mine.remove(bin);
            log.debug("Deleted {}/{} in {} ms", dir, bin, (System.nanoTime() - t0) / 1_000_000);
        } catch (Errno | HostTrees.Failure e) {
            log.warn("Could not delete the set-aside workdir content {}/{} ({}); the next sweep tries again", dir, bin,
                    e.getMessage());
        } finally {
            LinuxFs.closeQuietly(trashFd);
            pending.remove(bin);
        }
    }

    /** Stops taking deletions and waits (at most 2 minutes) for those under way. */
    @Override
    public void close() {
        deleter.shutdown();
        try {
            if (!deleter.awaitTermination(2, TimeUnit.MINUTES)) {
                log.warn("Deleting set-aside workdir content in {} did not finish; the next sweep goes on", dir);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static byte[] bytes(Path p) {
        return bytes(p.toString());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(HostFiles.PATH_CHARSET);
    }
}
