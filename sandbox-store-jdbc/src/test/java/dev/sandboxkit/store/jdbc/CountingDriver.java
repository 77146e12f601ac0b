package dev.sandboxkit.store.jdbc;

import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.SandboxDescriptor;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.ForwardingSandboxDriver;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicInteger;

/** Delegates to a real driver and counts creates and removals per container, so tests can see who removed what. */
final class CountingDriver extends ForwardingSandboxDriver {
    final Map<String, AtomicInteger> removals = new ConcurrentHashMap<>();
    final List<String> created = new CopyOnWriteArrayList<>();

    CountingDriver(SandboxDriver delegate) {
        super(delegate);
    }

    int removalsOf(String sandboxId) {
        AtomicInteger n = removals.get(sandboxId);
        return n == null ? 0 : n.get();
    }

    int totalRemovals() {
        return removals.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    @Override
    public String create(CreateRequest request) {
        String id = super.create(request);
        created.add(id);
        return id;
    }

    @Override
    public void remove(String sandboxId) {
        super.remove(sandboxId);
        removals.computeIfAbsent(sandboxId, k -> new AtomicInteger()).incrementAndGet();
    }

    /**
     * Makes the next {@link #list} call take its listing, then wait for {@code release} before returning it:
     * a slow engine, so that the caller works from a listing that is stale by the time it uses it.
     *
     * @return counted down once the held listing was taken; holds the listing itself
     */
    HeldListing holdNextList(CountDownLatch release) {
        HeldListing held = new HeldListing(release);
        nextList.set(held);
        return held;
    }

    static final class HeldListing {
        final CountDownLatch taken = new CountDownLatch(1);
        final CountDownLatch release;
        volatile List<SandboxDescriptor> listing;

        HeldListing(CountDownLatch release) {
            this.release = release;
        }
    }

    private final AtomicReference<HeldListing> nextList = new AtomicReference<>();

    @Override
    public List<SandboxDescriptor> list(Map<String, String> labels) {
        List<SandboxDescriptor> result = super.list(labels);
        HeldListing held = nextList.getAndSet(null);
        if (held != null) {
            held.listing = result;
            held.taken.countDown();
            try {
                held.release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return result;
    }
}
