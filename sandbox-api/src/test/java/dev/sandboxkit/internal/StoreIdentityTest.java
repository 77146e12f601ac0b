package dev.sandboxkit.internal;

import dev.sandboxkit.spi.SessionStore;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The store id and the liveness lock of process-local stores, with real files and a second JVM. */
class StoreIdentityTest {
    private static final Instant NOW = Instant.parse("2026-12-04T10:00:00Z");

    @TempDir
    Path root;

    @Test
    @DisplayName("a store keeps one id: the first manager writes it, the next ones read it")
    void oneIdPerStore() {
        SessionStore store = SessionStore.inMemory();
        try (StoreIdentity a = StoreIdentity.open(store, root, "fake", NOW);
             StoreIdentity b = StoreIdentity.open(store, root.resolve("elsewhere"), "fake", NOW)) {
            assertThat(a.id()).matches("st-[0-9a-f]{16}").isEqualTo(b.id());
            assertThat(StoreIdentity.open(SessionStore.inMemory(), root, "fake", NOW).id()).isNotEqualTo(a.id());
        }
    }

    @Test
    @DisplayName("an in-memory store holds a lock file while used and deletes it with its last user")
    void lockFileLifecycle() {
        SessionStore store = SessionStore.inMemory();
        StoreIdentity a = StoreIdentity.open(store, root, "fake", NOW);
        StoreIdentity b = StoreIdentity.open(store, root, "fake", NOW);
        Path lock = root.resolve(".sandboxkit/stores/" + a.id() + ".lock");
        assertThat(lock).exists();
        assertThat(a.provablyGone(a.id())).isFalse();
        try (StoreIdentity other = StoreIdentity.open(SessionStore.inMemory(), root, "fake", NOW)) {
            assertThat(other.provablyGone(a.id())).as("held in this JVM").isFalse();
        }
        a.close();
        assertThat(lock).as("still used by b").exists();
        b.close();
        assertThat(lock).doesNotExist();
        assertThat(root.resolve(".sandboxkit")).doesNotExist();
    }

    @Test
    @DisplayName("a durable store writes no lock file: its process dying proves nothing")
    void durableStoreHasNoLock() {
        SessionStore forwarded = new ForwardingStore(SessionStore.inMemory()); // isProcessLocal() is forwarded...
        SessionStore shared = new ForwardingStore(SessionStore.inMemory()) {
            @Override
            public boolean isProcessLocal() {
                return false; // ...and here answered as a shared store would
            }
        };
        try (StoreIdentity local = StoreIdentity.open(forwarded, root, "fake", NOW);
             StoreIdentity id = StoreIdentity.open(shared, root.resolve("b"), "fake", NOW)) {
            assertThat(root.resolve(".sandboxkit/stores/" + local.id() + ".lock")).exists();
            assertThat(root.resolve("b/.sandboxkit")).doesNotExist();
            assertThat(local.provablyGone(id.id())).isFalse();
        }
    }

    @Test
    @DisplayName("a store is provably gone only when its lock file exists and no process holds it")
    void provablyGoneOnlyWhenNobodyHoldsTheLock() throws Exception {
        try (StoreIdentity me = StoreIdentity.open(SessionStore.inMemory(), root, "fake", NOW)) {
            String other = "st-00000000000000bb";
            assertThat(me.provablyGone(other)).as("no lock file: nothing proven").isFalse();
            assertThat(me.provablyGone("../../etc/passwd")).as("not a store id").isFalse();

            Path lock = root.resolve(".sandboxkit/stores/" + other + ".lock");
            Process holder = holdLock(lock);
            try {
                assertThat(me.provablyGone(other)).as("held by a live process").isFalse();
            } finally {
                holder.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // kill -9: the OS drops its lock
            }
            assertThat(me.provablyGone(other)).as("its process is dead").isTrue();
            assertThat(me.provablyGone(other)).as("asking does not consume the proof").isTrue();
            me.forget(other);
            assertThat(lock).doesNotExist();
        }
    }

    /** Starts a second JVM that locks {@code file} as a store's process would, and waits until it holds it. */
    static Process holdLock(Path file) throws Exception {
        Files.createDirectories(file.getParent());
        Path src = Files.createTempDirectory("lockholder").resolve("LockHolder.java");
        Files.writeString(src, """
                import java.nio.channels.FileChannel;
                import java.nio.file.*;
                public class LockHolder {
                    public static void main(String[] a) throws Exception {
                        FileChannel ch = FileChannel.open(Path.of(a[0]), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                        if (ch.tryLock() == null) { System.exit(3); }
                        System.out.println("locked");
                        System.out.flush();
                        Thread.sleep(Long.MAX_VALUE);
                    }
                }
                """);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, src.toString(), file.toString()).redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertThat(line).as("the lock holder's first line").isEqualTo("locked");
        return p;
    }
}
