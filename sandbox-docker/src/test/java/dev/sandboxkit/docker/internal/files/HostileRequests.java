package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.docker.internal.files.FilesTestSupport.Entry;
import dev.sandboxkit.testsupport.Await;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

import dev.sandboxkit.SandboxNotFoundException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.sandboxkit.docker.internal.files.FilesTestSupport.tarStream;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.untar;
import static dev.sandboxkit.docker.internal.files.FilesTestSupport.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Hostile requests whose refusal does not depend on where the workdir lives: shared by {@link HostileWorkspaceTest}
 * (host directories) and {@link VolumeHostileWorkspaceTest} (named volumes), each adding its own checks of what was
 * (not) written.
 */
final class HostileRequests {
    private HostileRequests() {
    }

    static void refused(Reason reason, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SandboxFileException.class,
                e -> assertThat(e.reason()).as(e.getMessage()).isEqualTo(reason));
    }

    /** '..' and absolute paths outside /workspace, in every call; then the accepted spellings of paths inside. */
    static void badPaths(SandboxFiles files) {
        for (String bad : new String[] {"..", "../x", "a/../../etc/passwd", "/etc/passwd", "/workspace/../etc/passwd",
                "/workspacex/a", "/", "a/..", "/tmp"}) {
            refused(Reason.INVALID_PATH, () -> files.readBytes(bad));
            refused(Reason.INVALID_PATH, () -> files.stat(bad));
            refused(Reason.INVALID_PATH, () -> files.write(bad, utf8("x")));
            refused(Reason.INVALID_PATH, () -> files.mkdirs(bad));
            refused(Reason.INVALID_PATH, () -> files.deleteRecursively(bad));
            refused(Reason.INVALID_PATH, () -> files.downloadTar(bad));
            refused(Reason.INVALID_PATH, () -> files.uploadTar(bad, tarStream(Entry.file("x", "x"))));
        }
        files.write("/workspace/in.txt", utf8("in"));
        assertThat(files.readBytes("./in.txt")).isEqualTo(utf8("in"));
        assertThat(files.readBytes("/workspace//./in.txt")).isEqualTo(utf8("in"));
        refused(Reason.INVALID_PATH, () -> files.readBytes("//in.txt"));
        refused(Reason.INVALID_PATH, () -> files.delete("/workspace"));
    }

    /** Entries with '..'. */
    static void dotDotEntries(SandboxFiles files) {
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.file("../evil.txt", "x"))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("a", tarStream(Entry.file("b/../../../evil.txt", "x"))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.dir("..", 0755))));
    }

    /** Entries with absolute names, one under {@code /tmp} (returned, to check it is absent) and one in the canary. */
    static Path absoluteEntries(SandboxFiles files, Path canary) {
        String name = "/tmp/sandboxkit-evil-" + UUID.randomUUID();
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.file(name, "x"))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.file(canary + "/evil", "x"))));
        return Path.of(name);
    }

    /** Link entries pointing out of the target directory. */
    static void linksOut(SandboxFiles files, Path canary) {
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.link("l", TarFormat.SYMLINK, "/etc"))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(
                Entry.link("l", TarFormat.SYMLINK, canary.toString()))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("a/b", tarStream(
                Entry.link("l", TarFormat.SYMLINK, "../../../x"))));
        assertThat(files.exists("l")).isFalse();
    }

    /** Hard-link entries, to a host file and to an entry of the same archive. */
    static void hardLinkEntries(SandboxFiles files) {
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(
                Entry.link("h", TarFormat.HARDLINK, "/etc/passwd"))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.file("a", "x"),
                Entry.link("h", TarFormat.HARDLINK, "a"))));
        assertThat(files.exists("h")).isFalse();
    }

    /** Character-device, block-device and FIFO entries. */
    static void deviceEntries(SandboxFiles files) {
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.special("null", TarFormat.CHAR_DEVICE))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.special("sda", TarFormat.BLOCK_DEVICE))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", tarStream(Entry.special("p", TarFormat.FIFO))));
        assertThat(files.list("")).isEmpty();
    }

    /** A bad checksum, a truncated archive, and no archive at all. */
    static void malformedArchives(SandboxFiles files) {
        byte[] good = FilesTestSupport.tar(Entry.file("a", "x".repeat(1000)));
        byte[] corrupt = good.clone();
        corrupt[10] ^= 1;
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", new ByteArrayInputStream(corrupt)));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", new ByteArrayInputStream(Arrays.copyOf(good, 700))));
        refused(Reason.INVALID_ARCHIVE, () -> files.uploadTar("", new ByteArrayInputStream(
                utf8("this is not a tar archive at all".repeat(40)))));
    }

    /** How long a race may take to do its rounds: generous, it only bounds a run that cannot get there. */
    static final Duration RACE_DEADLINE = Duration.ofSeconds(90);

    /**
     * Shell for the start of each round of a sandbox's background loop: counts it in {@code rounds} (written aside
     * and renamed, so a reader never sees it half-written). Needs {@code i=0} before the loop.
     */
    static final String COUNT_ROUND = " i=$((i+1)); echo $i > rounds.n && mv -f rounds.n rounds;";

    /** The rounds the sandbox's loop has counted so far (0 before its first). */
    static int roundsSoFar(Sandbox sandbox) {
        return Integer.parseInt(FilesTestSupport.plant(sandbox, "cat rounds 2>/dev/null || echo 0").strip());
    }

    /** Waits until the loop has counted a round after {@code after}; returns the count then. */
    static int awaitRoundAfter(Sandbox sandbox, int after, String loop) {
        int[] now = {after};
        Await.until(Duration.ofSeconds(30), () -> (now[0] = roundsSoFar(sandbox)) > after,
                () -> "the sandbox's " + loop + " loop counted no round after " + after + loopState(sandbox));
        return now[0];
    }

    /** For a failure message: the workdir's top, the loop's last errors (in {@code loop.err}) and the processes. */
    static String loopState(Sandbox sandbox) {
        try {
            return "\n--- sandbox state:\n" + FilesTestSupport.plant(sandbox,
                    "ls -la . race race.d 2>&1; echo '--- loop.err:'; tail -n 20 loop.err 2>&1; echo '--- ps:'; ps 2>&1; true");
        } catch (RuntimeException | AssertionError e) {
            return "\n(sandbox state unavailable: " + e + ")";
        }
    }

    /** How the host's calls of a race fared, per call: succeeded or refused; and the sandbox's rounds meanwhile. */
    record RaceCalls(Map<String, AtomicInteger> ok, Map<String, AtomicInteger> refused, int swapRounds) {
        int succeeded() {
            return ok.values().stream().mapToInt(AtomicInteger::get).sum();
        }

        int refusals() {
            return refused.values().stream().mapToInt(AtomicInteger::get).sum();
        }

        int total() {
            return succeeded() + refusals();
        }

        @Override
        public String toString() {
            return total() + " host calls (succeeded " + ok + ", refused " + refused + ") during " + swapRounds
                    + " swap rounds";
        }
    }

    /**
     * Every files call in turn on {@code race/f} and {@code race} while the sandbox's loop (counting its rounds with
     * {@link #COUNT_ROUND}) swaps them: on until at least {@code calls} calls were made, the loop did at least
     * {@code rounds} rounds meanwhile (looked at every eight calls) and both outcomes were seen (a call succeeded, a
     * call was refused), within {@link #RACE_DEADLINE}; then the loop must still be running. Every content read must
     * be one the race could produce (never a host or image file). Call under a timeout longer than the deadline: a
     * call that never returns is what that catches.
     */
    static RaceCalls raceCalls(Sandbox sandbox, SandboxFiles files, int calls, int rounds) throws Exception {
        RaceCalls race = new RaceCalls(new TreeMap<>(), new TreeMap<>(), 0);
        int first = awaitRoundAfter(sandbox, 0, "swap");
        int[] seen = {first};
        int[] i = {0};
        Await.repeatUntil(RACE_DEADLINE,
                () -> race.total() >= calls && seen[0] - first >= rounds && race.succeeded() > 0 && race.refusals() > 0,
                () -> new RaceCalls(race.ok(), race.refused(), seen[0] - first) + "; wanted " + calls + " calls, "
                        + rounds + " rounds, some succeeded and some refused" + loopState(sandbox), () -> {
                    String op = switch (i[0]++ % 8) {
                        case 0 -> "read";
                        case 1 -> "stream";
                        case 2 -> "stat";
                        case 3 -> "list";
                        case 4 -> "write";
                        case 5 -> "download";
                        case 6 -> "upload";
                        default -> "delete";
                    };
                    try {
                        switch (op) {
                            case "read" -> assertSafe(new String(files.readBytes("race/f"), StandardCharsets.UTF_8));
                            case "stream" -> assertSafe(readAll(files.newInputStream("race/f")));
                            case "stat" -> files.stat("race/f");
                            case "list" -> files.list("race");
                            case "write" -> files.write("race/f", utf8("host\n"));
                            case "download" -> untar(files.downloadTar("race")).values().forEach(r -> assertSafe(r.text()));
                            case "upload" -> files.uploadTar("race", tarStream(Entry.file("up.txt", "host\n")));
                            default -> files.delete("race/f");
                        }
                        race.ok().computeIfAbsent(op, k -> new AtomicInteger()).incrementAndGet();
                    } catch (SandboxFileException | SandboxNotFoundException | UncheckedIOException expected) {
                        race.refused().computeIfAbsent(op, k -> new AtomicInteger()).incrementAndGet();
                    }
                    if (i[0] % 8 == 0) {
                        seen[0] = roundsSoFar(sandbox);
                    }
                });
        // Still swapping after the last call: nothing the calls did stopped or froze the loop.
        awaitRoundAfter(sandbox, seen[0], "swap");
        return new RaceCalls(race.ok(), race.refused(), seen[0] - first);
    }

    /**
     * Deletes {@code fill} recursively again and again while the sandbox keeps refilling it: {@code calls} calls,
     * and on until one deleted the tree, within {@link #RACE_DEADLINE}. A call may give up (the tree kept changing,
     * or the sandbox held an entry at that moment), never hang. Call under a timeout longer than the deadline.
     *
     * @return how the calls fared
     */
    static String deleteRace(SandboxFiles files, int calls) throws Exception {
        AtomicInteger done = new AtomicInteger();
        AtomicInteger gaveUp = new AtomicInteger();
        Await.repeatUntil(RACE_DEADLINE, () -> done.get() + gaveUp.get() >= calls && done.get() > 0,
                () -> done + " trees deleted, " + gaveUp + " calls gave up (wanted " + calls + " calls, one deleting)",
                () -> {
                    try {
                        if (files.deleteRecursively("fill")) {
                            done.incrementAndGet();
                        }
                    } catch (SandboxFileException e) {
                        gaveUp.incrementAndGet();
                    }
                });
        return done + " trees deleted, " + gaveUp + " calls gave up";
    }

    private static void assertSafe(String content) {
        assertThat(content).as("content read during the race").isIn("safe\n", "host\n", "inner\n", "")
                .doesNotContain("root:").doesNotContain("CANARY");
    }

    private static String readAll(InputStream in) throws IOException {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
