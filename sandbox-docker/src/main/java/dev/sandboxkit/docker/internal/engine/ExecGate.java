package dev.sandboxkit.docker.internal.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Keeps this driver's exec creation and container starts apart from a freeze ({@code docker pause}) of the same
 * container or volume: the engine refuses to create or start an exec in a paused container (409), and a container
 * started on a volume while its files are being reached would not be frozen. Starting an exec holds the shared
 * side for its create and start calls; a freeze holds the exclusive side from pause to unpause. The engine
 * answers an exec start (101) before the runtime has started the process, so an exec started under the gate stays
 * {@link #unconfirmed} until its process ran ({@link #done}) or a freeze saw it running. Keys are container ids and
 * volume workdir locations; locks are striped so that nothing has to be forgotten when a container goes.
 */
public final class ExecGate {
    private static final int STRIPES = 256;

    /** Container ids; a freeze takes these after its volume's. */
    private final ReentrantReadWriteLock[] containers = stripes();
    /** Volume workdir locations; nothing holding one of these waits for another. */
    private final ReentrantReadWriteLock[] volumes = stripes();
    /** Container id to the execs started there whose process may not run yet. */
    private final ConcurrentHashMap<String, Set<String>> unconfirmed = new ConcurrentHashMap<>();

    ExecGate() {
    }

    private static ReentrantReadWriteLock[] stripes() {
        ReentrantReadWriteLock[] out = new ReentrantReadWriteLock[STRIPES];
        for (int i = 0; i < STRIPES; i++) {
            out[i] = new ReentrantReadWriteLock();
        }
        return out;
    }

    /**
     * Holds off a freeze of a container until the pass is closed: taken for an exec's create and start calls.
     *
     * @param containerId the container
     * @return the pass; close it right after the engine calls that need a running container
     */
    public Pass enter(String containerId) {
        Lock lock = containers[index(containerId)].readLock();
        lock.lock();
        return new Pass(containerId, lock);
    }

    /**
     * Holds off a freeze of a volume until the pass is closed: taken to start a container on it.
     *
     * @param location the volume workdir's location
     * @return the pass
     */
    public Pass enterVolume(String location) {
        Lock lock = volumes[index(location)].readLock();
        lock.lock();
        return new Pass(location, lock);
    }

    /**
     * Holds off container starts on a volume until the hold is closed. Taken before {@link #freeze}, never while
     * holding it.
     *
     * @param location the volume workdir's location
     * @return the hold
     */
    public Hold freezeVolume(String location) {
        Lock lock = volumes[index(location)].writeLock();
        lock.lock();
        return new Hold(List.of(lock));
    }

    /**
     * Holds off exec creation and starts in every container until the hold is closed.
     *
     * @param containerIds the containers
     * @return the hold
     */
    public Hold freeze(Collection<String> containerIds) {
        // Sorted, so that two freezes never wait for each other's stripes.
        TreeSet<Integer> indices = new TreeSet<>();
        containerIds.forEach(k -> indices.add(index(k)));
        List<Lock> held = new ArrayList<>(indices.size());
        for (int i : indices) {
            Lock lock = containers[i].writeLock();
            lock.lock();
            held.add(lock);
        }
        return new Hold(held);
    }

    /**
     * The execs started in a container whose process may not run yet (a freeze waits for them first).
     *
     * @param containerId the container
     * @return a copy of their ids
     */
    public List<String> unconfirmed(String containerId) {
        Set<String> s = unconfirmed.get(containerId);
        return s == null ? List.of() : List.copyOf(s);
    }

    /**
     * An exec's process ran (it printed, ended, or a freeze saw it running): no freeze needs to wait for it.
     *
     * @param containerId its container
     * @param execId      the exec
     */
    public void done(String containerId, String execId) {
        if (execId == null) {
            return;
        }
        unconfirmed.computeIfPresent(containerId, (k, s) -> {
            s.remove(execId);
            return s.isEmpty() ? null : s;
        });
    }

    private static int index(String key) {
        return Math.floorMod(key.hashCode(), STRIPES);
    }

    /** The shared side of the gate for one key. */
    public final class Pass implements AutoCloseable {
        private final String key;
        private final Lock lock;
        private boolean closed;

        private Pass(String key, Lock lock) {
            this.key = key;
            this.lock = lock;
        }

        /**
         * The engine accepted the start of {@code execId}: it is {@link #unconfirmed} until {@link #done}.
         *
         * @param execId the exec
         */
        public void started(String execId) {
            unconfirmed.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(execId);
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                lock.unlock();
            }
        }
    }

    /** The exclusive side of the gate for some keys. */
    public static final class Hold implements AutoCloseable {
        private final List<Lock> locks;

        private Hold(List<Lock> locks) {
            this.locks = locks;
        }

        @Override
        public void close() {
            for (int i = locks.size() - 1; i >= 0; i--) {
                locks.get(i).unlock();
            }
        }
    }
}
