package dev.sandboxkit.internal;

import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import dev.sandboxkit.spi.SessionStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Which session store accounts for a backend resource, so that the orphan sweep acts only on what it can prove.
 *
 * <p>Every store gets an id, kept in the store itself (record {@value #RECORD_ID}, written once by whichever manager
 * starts first), and every container carries it as {@link dev.sandboxkit.spi.SandboxLabels#STORE}. A manager judges
 * a container only by the records of that container's own store: a container of another store is another
 * application's business, whatever its fleet, because "its owner is unknown here" proves nothing.
 *
 * <p>The one exception is a {@linkplain SessionStore#isProcessLocal() process-local} store (the in-memory one), which
 * dies with its process: while it lives, its process holds an exclusive lock on
 * {@code <workspaceRoot>/.sandboxkit/stores/<id>.lock}. A manager that finds such a file it can lock has proof that the
 * process, and so the store and every session in it, is gone: that is how an application restarted on the same
 * workspace root cleans up after its crashed predecessor. A lock file of a store in this JVM is never opened (closing
 * a second channel on a file drops this process's POSIX locks on it).
 */
final class StoreIdentity implements AutoCloseable {
    /** The store record that holds the store's id; no session id can start with '_'. */
    static final String RECORD_ID = "_store";
    private static final String ID_ATTRIBUTE = "id";
    private static final Logger log = LoggerFactory.getLogger(StoreIdentity.class);
    /** Lock files held by this JVM, by path, with how many managers use each. Guarded by itself. */
    private static final Map<Path, Held> HELD = new HashMap<>();

    private final String id;
    private final Path lockDir;
    private final Path heldLock;

    private StoreIdentity(String id, Path lockDir, Path heldLock) {
        this.id = id;
        this.lockDir = lockDir;
        this.heldLock = heldLock;
    }

    /**
     * Reads the store's id, writing a new one if the store has none yet, and for a process-local store takes its
     * liveness lock under {@code workspaceRoot}.
     */
    static StoreIdentity open(SessionStore store, Path workspaceRoot, String driverName, Instant now) {
        String id = readOrCreate(store, driverName, now);
        Path dir = workspaceRoot.toAbsolutePath().normalize().resolve(".sandboxkit").resolve("stores");
        Path held = store.isProcessLocal() ? hold(dir, id) : null;
        return new StoreIdentity(id, dir, held);
    }

    private static String readOrCreate(SessionStore store, String driverName, Instant now) {
        for (int attempt = 0; attempt < 3; attempt++) {
            Optional<String> found = store.find(RECORD_ID).map(r -> r.attributes().get(ID_ATTRIBUTE));
            if (found.isPresent()) {
                return found.get();
            }
            byte[] random = new byte[8];
            ThreadLocalRandom.current().nextBytes(random);
            String fresh = "st-" + HexFormat.of().formatHex(random);
            // Shaped like a presence record (SUSPENDED, no workdir) so that every pass over the records skips it.
            store.insert(SessionRecord.builder().sessionId(RECORD_ID).driver(driverName).state(SessionState.SUSPENDED)
                    .sandboxId(null).workspace("-").spec("-").specFingerprint("-").ephemeral(false).createdAt(now)
                    .lastActivity(now).sandboxStartedAt(null).owner(null).leaseExpiry(null).version(1)
                    .attributes(Map.of(ID_ATTRIBUTE, fresh)).build());
            // Read back: another manager may have inserted first, and then its id is the store's.
        }
        throw new IllegalStateException("the session store keeps no record " + RECORD_ID + " (its id)");
    }

    /** The store's id, the value of the store label. */
    String id() {
        return id;
    }

    /**
     * Whether {@code storeId} names a process-local store whose process is provably gone: its lock file is under
     * this manager's workspace root and nobody holds it. {@code false} whenever that cannot be shown.
     */
    boolean provablyGone(String storeId) {
        if (storeId.equals(id) || !storeId.matches("st-[0-9a-f]{16}")) {
            return false;
        }
        Path file = lockDir.resolve(storeId + ".lock");
        synchronized (HELD) {
            if (HELD.containsKey(file)) {
                return false; // a store of this JVM: alive, and its file must not be opened a second time
            }
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                FileLock lock = ch.tryLock();
                if (lock == null) {
                    return false; // held by a live process
                }
                lock.release();
                return true;
            } catch (NoSuchFileException | OverlappingFileLockException notProven) {
                return false;
            } catch (IOException e) {
                log.debug("Could not check the liveness lock {}: {}", file, e.toString());
                return false;
            }
        }
    }

    /**
     * Deletes the lock file of a gone store once nothing of it is left to sweep, so that files of crashed
     * processes do not pile up. Checks again that nobody holds it.
     */
    void forget(String storeId) {
        if (!provablyGone(storeId)) {
            return;
        }
        try {
            Files.deleteIfExists(lockDir.resolve(storeId + ".lock"));
        } catch (IOException e) {
            log.debug("Could not delete the lock file of gone store {}: {}", storeId, e.toString());
        }
    }

    /** Releases this manager's use of the liveness lock; the last user in the JVM deletes the file. */
    @Override
    public void close() {
        if (heldLock == null) {
            return;
        }
        synchronized (HELD) {
            Held h = HELD.get(heldLock);
            if (h == null || --h.users > 0) {
                return;
            }
            HELD.remove(heldLock);
            try {
                Files.deleteIfExists(heldLock); // deleted while still locked: no other process can take it as proof
                h.channel.close();
                Files.deleteIfExists(lockDir);
                Files.deleteIfExists(lockDir.getParent());
            } catch (IOException notEmpty) {
                log.debug("Left {} in place: {}", lockDir, notEmpty.toString());
            }
        }
    }

    private static Path hold(Path dir, String id) {
        Path file = dir.resolve(id + ".lock");
        synchronized (HELD) {
            Held h = HELD.get(file);
            if (h != null) {
                h.users++;
                return file;
            }
            try {
                Files.createDirectories(dir);
                // Locked under a temporary name first, then moved into place: a checker never sees the final
                // name unlocked while this process lives.
                Path tmp = Files.createTempFile(dir, id + ".", ".tmp");
                FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE);
                try {
                    FileLock lock = ch.tryLock();
                    if (lock == null) {
                        throw new IOException("could not lock " + tmp);
                    }
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
                } catch (IOException | RuntimeException e) {
                    ch.close();
                    Files.deleteIfExists(tmp);
                    throw e;
                }
                HELD.put(file, new Held(ch));
                return file;
            } catch (AtomicMoveNotSupportedException e) {
                log.info("No crash clean-up for this in-memory store: {} cannot hold a liveness lock ({})", dir,
                        e.toString());
                return null;
            } catch (IOException e) {
                log.info("No crash clean-up for this in-memory store: could not hold a liveness lock in {} ({})", dir,
                        e.toString());
                return null;
            }
        }
    }

    private static final class Held {
        final FileChannel channel;
        int users = 1;

        Held(FileChannel channel) {
            this.channel = channel;
        }
    }
}
