package dev.sandboxkit.docker.internal.channel;

import dev.sandboxkit.ExecMode;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The command channels of one sandbox: idle ones ready for the next command, busy ones carrying one each.
 * Channels are opened on demand (the first exec opens the first), at most {@code max} at once; a command
 * that finds them all busy runs as a plain exec instead of waiting. Thread-safe; never blocks on I/O
 * while holding its lock.
 */
final class ChannelPool {
    final String containerId;
    final ExecMode mode;
    private final ArrayDeque<CommandChannel> idle = new ArrayDeque<>();
    private final Set<CommandChannel> all = new HashSet<>();
    private int opening;
    /** Why the channel cannot run in this sandbox, once a start failed; then every exec is plain. */
    private String unavailable;
    private boolean removed;

    /** The most channels this sandbox may open; more concurrent execs run plain. */
    final int maxChannels;

    ChannelPool(String containerId, ExecMode mode, int maxChannels) {
        this.containerId = containerId;
        this.mode = mode;
        this.maxChannels = maxChannels;
    }

    synchronized String unavailable() {
        return unavailable;
    }

    synchronized void markUnavailable(String why) {
        if (unavailable == null) {
            unavailable = why;
        }
    }

    /** Whether the driver started removing the sandbox. */
    synchronized boolean removed() {
        return removed;
    }

    /** The most recently used idle channel (its caches are warm), or {@code null}. */
    synchronized CommandChannel takeIdle() {
        return idle.pollFirst();
    }

    /** Reserves the right to open one more channel; false when {@code max} are open or the sandbox is gone. */
    synchronized boolean reserve(int max) {
        if (removed || all.size() + opening >= max) {
            return false;
        }
        opening++;
        return true;
    }

    /** Registers a channel opened under a reservation; false if the sandbox was removed meanwhile. */
    synchronized boolean opened(CommandChannel channel) {
        opening--;
        if (removed) {
            return false;
        }
        all.add(channel);
        return true;
    }

    synchronized void openFailed() {
        opening--;
    }

    /** Returns a channel after a command: back to the idle ones if clean, otherwise closed and forgotten. */
    void release(CommandChannel channel, long nowMillis) {
        boolean keep;
        synchronized (this) {
            keep = !removed && !channel.broken() && all.contains(channel);
            if (keep) {
                channel.idle(nowMillis);
                idle.addFirst(channel);
            } else {
                all.remove(channel);
            }
        }
        if (!keep) {
            channel.close();
        }
    }

    /**
     * Removes and returns the idle channels whose last command ended before {@code millis}; the caller closes
     * them. The most recently used are at the front, so the old ones are at the back.
     */
    synchronized List<CommandChannel> takeIdleSince(long millis) {
        List<CommandChannel> old = List.of();
        CommandChannel last;
        while ((last = idle.peekLast()) != null && last.idleSince() - millis < 0) {
            idle.pollLast();
            all.remove(last);
            if (old.isEmpty()) {
                old = new ArrayList<>(2);
            }
            old.add(last);
        }
        return old;
    }

    /** Forgets a channel found dead while idle. */
    void discard(CommandChannel channel) {
        synchronized (this) {
            all.remove(channel);
        }
        channel.close();
    }

    /** The sandbox is being removed: running commands will report KILLED when their stream breaks. */
    synchronized void removing() {
        removed = true;
        for (CommandChannel c : all) {
            c.containerRemoved = true;
        }
    }

    /** Closes every channel (idle supervisors exit on end of file); busy readers wake with an error. */
    void closeAll() {
        List<CommandChannel> channels;
        synchronized (this) {
            removed = true;
            channels = new ArrayList<>(all);
            all.clear();
            idle.clear();
        }
        channels.forEach(CommandChannel::close);
    }

    /** Open channels, idle or busy (for tests). */
    synchronized int size() {
        return all.size();
    }

    synchronized int idleCount() {
        return idle.size();
    }

    /** The open channels (for tests). */
    synchronized List<CommandChannel> channels() {
        return new ArrayList<>(all);
    }
}
