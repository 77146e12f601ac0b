package dev.sandboxkit.testkit;

import dev.sandboxkit.testsupport.Await;
import dev.sandboxkit.testsupport.HousekeepingScheduler;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The shared test helpers of the test-jar (dev.sandboxkit.testsupport). */
@DisplayName("Test support: waits on rounds and on the manager's passes")
class TestSupportTest {
    @Test
    @DisplayName("repeatUntil runs rounds until enough happened, and fails naming the progress at its deadline")
    void repeatUntil() throws Exception {
        AtomicInteger n = new AtomicInteger();
        assertThat(Await.repeatUntil(Duration.ofSeconds(10), () -> n.get() >= 5, n::toString, n::incrementAndGet))
                .isEqualTo(5);
        assertThatThrownBy(() -> Await.repeatUntil(Duration.ofMillis(50), () -> false, () -> "stuck at 3",
                () -> Thread.sleep(5))).isInstanceOf(AssertionError.class).hasMessageContaining("stuck at 3")
                .hasMessageContaining("PT0.05S");
    }

    @Test
    @DisplayName("awaitPasses waits for whole passes of every periodic task that start after the call")
    void awaitPasses() throws Exception {
        try (HousekeepingScheduler scheduler = new HousekeepingScheduler("test-housekeeping")) {
            AtomicInteger fast = new AtomicInteger();
            AtomicInteger slow = new AtomicInteger();
            scheduler.scheduleWithFixedDelay(fast::incrementAndGet, 0, 1, TimeUnit.MILLISECONDS);
            scheduler.scheduleWithFixedDelay(slow::incrementAndGet, 0, 100, TimeUnit.MILLISECONDS);
            int slowBefore = slow.get();
            scheduler.awaitPasses(2, Duration.ofSeconds(30));
            assertThat(slow.get()).isGreaterThanOrEqualTo(slowBefore + 2);
            HousekeepingScheduler.Mark mark = scheduler.mark();
            scheduler.awaitPasses(3, Duration.ofMillis(1), Duration.ofSeconds(30));
            assertThat(scheduler.ranSince(mark, 3, Duration.ofMillis(1))).isTrue();
            assertThatThrownBy(() -> scheduler.ranSince(mark, 1, Duration.ofMillis(7)))
                    .isInstanceOf(AssertionError.class).hasMessageContaining("no periodic task runs every PT0.007S");
            assertThat(Thread.getAllStackTraces().keySet()).anyMatch(t -> t.getName().startsWith("test-housekeeping-")
                    && t.isDaemon());
        }
    }

    @Test
    @DisplayName("a task a pass queued that is still running is waited for; one not due yet is not")
    void queuedTasks() throws Exception {
        try (HousekeepingScheduler scheduler = new HousekeepingScheduler("test-housekeeping")) {
            CountDownLatch blocked = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger passes = new AtomicInteger();
            scheduler.scheduleWithFixedDelay(() -> {
                if (passes.getAndIncrement() == 0) {
                    scheduler.execute(() -> {
                        blocked.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                }
            }, 0, 10, TimeUnit.MILLISECONDS);
            scheduler.schedule(() -> { }, 1, TimeUnit.HOURS);
            assertThat(blocked.await(30, TimeUnit.SECONDS)).isTrue();
            HousekeepingScheduler.Mark mark = scheduler.mark();
            int before = passes.get();
            Await.until(Duration.ofSeconds(30), () -> passes.get() >= before + 3, () -> "passes on the other thread");
            assertThat(scheduler.ranSince(mark, 1)).as("passes ran, but the task the first queued still runs").isFalse();
            assertThatThrownBy(() -> scheduler.awaitPasses(1, Duration.ofMillis(100)))
                    .isInstanceOf(AssertionError.class).hasMessageContaining("tasks due and not finished: 1");
            release.countDown();
            Await.until(Duration.ofSeconds(30), () -> scheduler.ranSince(mark, 1), () -> scheduler.progress(mark));
        }
    }
}
