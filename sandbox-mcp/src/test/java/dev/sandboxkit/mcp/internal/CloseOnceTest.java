package dev.sandboxkit.mcp.internal;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A server shutdown blocks on the session's graceful close and then closes the manager: the sandbox's cleanup must
 * have finished by the time that block returns, whichever thread ran it. (StdioIT once found an unkeyed session's
 * workdir left behind because the cleanup ran in a {@code doFinally}, after {@code block()} had returned.)
 */
class CloseOnceTest {

    @Test
    void theCleanupHasFinishedWhenTheSubscriberHearsOfTheEnd() {
        AtomicBoolean cleaned = new AtomicBoolean();
        CloseOnce once = slowCleanup(cleaned);
        // The end arrives on a timer thread, as the SDK's transports complete on their own schedulers.
        once.after(Mono.delay(Duration.ofMillis(20)).then()).block(Duration.ofSeconds(10));
        assertThat(cleaned).isTrue();
    }

    @Test
    void aFailedCloseStillCleansUpFirstAndKeepsItsError() {
        AtomicBoolean cleaned = new AtomicBoolean();
        CloseOnce once = slowCleanup(cleaned);
        Mono<Void> failing = Mono.delay(Duration.ofMillis(20)).then(Mono.error(new IllegalStateException("boom")));
        assertThatThrownBy(() -> once.after(failing).block(Duration.ofSeconds(10))).hasMessageContaining("boom");
        assertThat(cleaned).isTrue();
    }

    @Test
    void aSecondCloserWaitsForTheFirstAndTheCleanupRunsOnce() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CloseOnce once = new CloseOnce(() -> {
            runs.incrementAndGet();
            inside.countDown();
            await(release);
        });
        CompletableFuture<Void> first = CompletableFuture.runAsync(once::run);
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> second = CompletableFuture.runAsync(once::run);
        Thread.sleep(100);
        assertThat(second).as("the second closer returned while the cleanup was still running").isNotDone();
        release.countDown();
        first.get(10, TimeUnit.SECONDS);
        second.get(10, TimeUnit.SECONDS);
        assertThat(runs).hasValue(1);
    }

    /** A cleanup that takes a while (as destroying a sandbox does) and then says it is done. */
    private static CloseOnce slowCleanup(AtomicBoolean cleaned) {
        return new CloseOnce(() -> {
            sleep(200);
            cleaned.set(true);
        });
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
