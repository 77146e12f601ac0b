package dev.sandboxkit.tools;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.testkit.SandboxTest;
import dev.sandboxkit.tools.internal.Json;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Every tool on the real engine, with the arguments a careless or hostile model sends. */
@SandboxTest(driver = "docker")
class SandboxToolsDockerTest {
    private SandboxTools tools;
    private SandboxManager manager;

    @BeforeEach
    void tools(SandboxManager manager, SandboxSpec spec) {
        this.manager = manager;
        this.tools = SandboxTools.builder(manager).spec(spec).build();
    }

    private ToolResult call(String conversation, String tool, Object... keyValues) {
        Map<String, Object> args = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            args.put((String) keyValues[i], keyValues[i + 1]);
        }
        StringBuilder json = new StringBuilder("{");
        args.forEach((k, v) -> json.append(json.length() > 1 ? "," : "").append(Json.quote(k)).append(':')
                .append(v instanceof String s ? Json.quote(s) : String.valueOf(v)));
        return tools.execute(conversation, tool, json.append('}').toString());
    }

    private String ok(String conversation, String tool, Object... keyValues) {
        ToolResult r = call(conversation, tool, keyValues);
        assertThat(r.error()).as("%s: %s", tool, r.text()).isFalse();
        return r.text();
    }

    private String refused(String conversation, String tool, Object... keyValues) {
        ToolResult r = call(conversation, tool, keyValues);
        assertThat(r.error()).as("%s should be refused: %s", tool, r.text()).isTrue();
        return r.text();
    }

    @Test
    void writeReadEditListAndSearchAFile() {
        assertThat(ok("c", "write_file", "path", "src/app.sh", "content", "greet() {\n  echo hello\n}\ngreet\ngreet\n"))
                .isEqualTo("Wrote 37 bytes (5 lines) to /workspace/src/app.sh (new file).");
        assertThat(ok("c", "read_file", "path", "/workspace/src/app.sh")).isEqualTo("greet() {\n  echo hello\n}\ngreet\ngreet\n");
        assertThat(ok("c", "read_file", "path", "src/app.sh", "start_line", 2, "end_line", 3))
                .isEqualTo("  echo hello\n}\n[/workspace/src/app.sh: lines 2-3; the file goes on: continue with start_line=4]");
        assertThat(ok("c", "read_file", "path", "src/app.sh", "start_line", 4))
                .isEqualTo("greet\ngreet\n[/workspace/src/app.sh: lines 4-5 of 5, end of file]");
        assertThat(refused("c", "read_file", "path", "src/app.sh", "start_line", 9))
                .isEqualTo("/workspace/src/app.sh has 5 lines; start_line 9 is past its end.");

        assertThat(refused("c", "edit_file", "path", "src/app.sh", "old_string", "greet\n", "new_string", "greet x\n"))
                .isEqualTo("\"old_string\" occurs 2 times in /workspace/src/app.sh (lines 4, 5); include more surrounding "
                        + "lines to make it unique, or set replace_all to true to replace every occurrence.");
        assertThat(refused("c", "edit_file", "path", "src/app.sh", "old_string", "echo  hello", "new_string", "x"))
                .contains("was not found").contains("A match exists if whitespace is ignored");
        assertThat(refused("c", "edit_file", "path", "src/app.sh", "old_string", "goodbye", "new_string", "x"))
                .isEqualTo("\"old_string\" was not found in /workspace/src/app.sh. Read the file again and copy the text exactly.");
        assertThat(ok("c", "edit_file", "path", "src/app.sh", "old_string", "echo hello", "new_string", "echo \"hi $1\""))
                .isEqualTo("Edited /workspace/src/app.sh: replaced 1 occurrence (line 2).");
        assertThat(ok("c", "edit_file", "path", "src/app.sh", "old_string", "greet\n", "new_string", "greet you\n",
                "replace_all", true)).isEqualTo("Edited /workspace/src/app.sh: replaced 2 occurrences (lines 4, 5).");
        assertThat(ok("c", "run_command", "command", "sh src/app.sh")).isEqualTo("Exit code: 0\n--- stdout ---\nhi you\nhi you\n");

        ok("c", "run_command", "command", "mkdir -p src/lib .git/objects && echo 'x = 1' > src/lib/util.sh && touch .git/objects/a");
        assertThat(ok("c", "list_files")).isEqualTo("/workspace:\n.git/\nsrc/\n[2 directories, 0 files]");
        assertThat(ok("c", "list_files", "recursive", true)).isEqualTo("/workspace:\n.git/  (not expanded)\nsrc/\n"
                + "src/app.sh  (47 bytes)\nsrc/lib/\nsrc/lib/util.sh  (6 bytes)\n[3 directories, 2 files]");
        // Regular files are counted as files; links and special files are named apart.
        ok("c", "run_command", "command", "ln -s lib/util.sh src/link.sh && mkfifo src/pipe");
        assertThat(ok("c", "list_files", "path", "src")).isEqualTo("/workspace/src:\napp.sh  (47 bytes)\nlib/\n"
                + "link.sh -> lib/util.sh  (symbolic link, not followed)\npipe  (a FIFO)\n"
                + "[1 directory, 1 file, 1 symbolic link, 1 other entry]");
        ok("c", "run_command", "command", "rm src/link.sh src/pipe");
        assertThat(ok("c", "search_files", "pattern", "gre+t", "path", "src"))
                .isEqualTo("app.sh:1: greet() {\napp.sh:4: greet you\napp.sh:5: greet you\n[3 matches in /workspace/src, 2 files searched]");
        assertThat(ok("c", "search_files", "pattern", "X = 1", "ignore_case", true, "literal", true, "glob", "**/*.sh"))
                .isEqualTo("src/lib/util.sh:1: x = 1\n[1 match in /workspace, 2 files searched]");
        assertThat(ok("c", "search_files", "pattern", "nowhere")).isEqualTo("No matches in /workspace (2 files searched)");
        assertThat(refused("c", "search_files", "pattern", "(unclosed")).contains("not a valid regular expression");
    }

    @Test
    void anEditedScriptStaysExecutable() {
        ok("c", "run_command", "command", "printf '#!/bin/sh\\necho v1\\n' > run.sh && chmod 755 run.sh");
        ok("c", "edit_file", "path", "run.sh", "old_string", "v1", "new_string", "v2");
        ok("c", "write_file", "path", "run.sh", "content", "#!/bin/sh\necho v3\n");
        assertThat(ok("c", "run_command", "command", "./run.sh && stat -c %a run.sh"))
                .isEqualTo("Exit code: 0\n--- stdout ---\nv3\n755\n");
    }

    @Test
    void longFilesAreReadInRangesAndBinaryFilesAreNamed() {
        ok("c", "run_command", "command", "seq 1 200000 > big.txt && head -c 3000 /dev/urandom > blob.bin");
        String first = ok("c", "read_file", "path", "big.txt");
        assertThat(first).startsWith("1\n2\n3\n").contains("[/workspace/big.txt: lines 1-").contains(" of a 1.3 MB file, "
                + "cut at the 100.0 KB read limit; continue with start_line=");
        assertThat(first.length()).isLessThanOrEqualTo(100_000 + 200);
        long next = Long.parseLong(first.replaceAll("(?s).*start_line=([0-9]+)]$", "$1"));
        String lastShown = first.substring(0, first.indexOf("\n[")).replaceAll("(?s).*\n", "");
        assertThat(Long.parseLong(lastShown)).isEqualTo(next - 1);
        assertThat(ok("c", "read_file", "path", "big.txt", "start_line", next, "end_line", next + 1))
                .startsWith(next + "\n" + (next + 1) + "\n[");
        assertThat(ok("c", "read_file", "path", "blob.bin")).isEqualTo("/workspace/blob.bin is a binary file (3,000 bytes); "
                + "it is not shown. Inspect it with run_command (for example `od -c /workspace/blob.bin | head`).");
    }

    @Test
    void commandsReportTimeoutsAndCutHugeOutputHeadAndTail() {
        String r = ok("c", "run_command", "command", "echo starting; sleep 30", "timeout_seconds", 1);
        assertThat(r).isEqualTo("Timed out: the command was still running after 1 s and was killed. Run long jobs in the "
                + "background with their output redirected to a file, or raise timeout_seconds.\n--- stdout ---\nstarting\n");
        assertThat(ok("c", "run_command", "command", "echo still usable")).endsWith("still usable\n");

        String big = ok("c", "run_command", "command", "seq 1 1500000; echo done >&2"); // 10.9 MB
        assertThat(big).startsWith("Exit code: 0\n--- stdout ---\n1\n2\n3\n")
                .contains(" cut from the middle of 10.9 MB of output ...]\n").contains("1499999\n1500000\n--- stderr ---\ndone\n");
        assertThat(big.length()).isLessThan(SandboxTools.Builder.DEFAULT_OUTPUT_LIMIT + 300);
        assertThat(ok("c", "run_command", "command", "exit 3")).isEqualTo("Exit code: 3\n(no output)\n");
        assertThat(ok("c", "run_command", "command", "pwd", "workdir", "missing")).startsWith("Exit code: 126\n");
        ok("c", "run_command", "command", "mkdir -p sub/dir");
        assertThat(ok("c", "run_command", "command", "pwd", "workdir", "sub/dir"))
                .isEqualTo("Exit code: 0\n--- stdout ---\n/workspace/sub/dir\n");
    }

    @Test
    void twoConversationsNeverShareFiles() {
        ok("alice", "write_file", "path", "secret.txt", "content", "alice's");
        assertThat(refused("bob", "read_file", "path", "secret.txt"))
                .isEqualTo("No such file or directory: /workspace/secret.txt. Use list_files to see what exists.");
        assertThat(ok("bob", "run_command", "command", "ls -A")).isEqualTo("Exit code: 0\n(no output)\n");
        assertThat(ok("alice", "read_file", "path", "secret.txt")).isEqualTo("alice's");
        assertThat(tools.sessionId("alice")).isNotEqualTo(tools.sessionId("bob"));
    }

    @Test
    void hostileArgumentsAreRefusedAndTheHostIsUntouched(@TempDir Path outside) throws Exception {
        Path victim = Files.writeString(outside.resolve("victim.txt"), "host data\n");
        Files.setPosixFilePermissions(outside, java.nio.file.attribute.PosixFilePermissions.fromString("rwxrwxrwx"));
        String before = sha256(Path.of("/etc/passwd")) + sha256(victim);
        // The sandbox plants links out of the workdir, to files and to directories, and a FIFO.
        ok("c", "run_command", "command", "ln -s /etc/passwd passwd; ln -s / root; mkdir d; ln -s /etc d/etc; "
                + "ln -s " + victim + " victim; ln -s " + outside + " out; mkfifo pipe");

        for (String path : new String[] {"../../../etc/passwd", "/etc/passwd", "/workspace/../etc/passwd", "a/../../x"}) {
            assertThat(refused("c", "read_file", "path", path)).as(path).contains("not a path inside /workspace");
            assertThat(refused("c", "write_file", "path", path, "content", "x")).as(path).contains("not a path inside /workspace");
        }
        assertThat(refused("c", "read_file", "path", "passwd")).contains("symbolic link");
        assertThat(refused("c", "read_file", "path", "root/etc/passwd")).contains("symbolic link");
        assertThat(refused("c", "read_file", "path", "d/etc/passwd")).contains("symbolic link");
        assertThat(refused("c", "edit_file", "path", "victim", "old_string", "host", "new_string", "pwned")).contains("symbolic link");
        assertThat(refused("c", "write_file", "path", "out/victim.txt", "content", "pwned")).contains("symbolic link");
        assertThat(refused("c", "write_file", "path", "out/new.txt", "content", "pwned")).contains("symbolic link");
        assertThat(refused("c", "list_files", "path", "root")).contains("not a directory");
        assertThat(refused("c", "list_files", "path", "root/etc")).contains("symbolic link");
        assertThat(refused("c", "search_files", "pattern", "root:", "path", "d/etc")).contains("symbolic link");
        assertThat(ok("c", "search_files", "pattern", "root:|host data")).startsWith("No matches");
        assertThat(refused("c", "read_file", "path", "pipe")).contains("a FIFO, not a regular file");
        assertThat(refused("c", "read_file", "path", "a\u0000b")).contains("NUL");
        assertThat(refused("c", "write_file", "path", "x\u0000/../../etc/passwd", "content", "x")).contains("NUL");
        // Writing over a planted link replaces the link itself; the target is never written through.
        ok("c", "write_file", "path", "victim", "content", "replaced the link");
        assertThat(ok("c", "run_command", "command", "cat victim; echo; [ -L victim ] || echo regular"))
                .isEqualTo("Exit code: 0\n--- stdout ---\nreplaced the link\nregular\n");
        // A 100 MiB write is refused before anything reaches the disk.
        String huge = "x".repeat(100 * 1024 * 1024);
        assertThat(refused("c", "write_file", "path", "huge.txt", "content", huge))
                .isEqualTo("The arguments of write_file are 104.9 MB long, over the 64.0 MB the tools accept. Send less per call.");
        ToolResult parsed = tools.execute("c", "write_file", Map.of("path", "huge.txt", "content", huge)); // as MCP passes them
        assertThat(parsed.error()).isTrue();
        assertThat(parsed.text()).startsWith("content is 104.9 MB, over the 10.0 MB limit of write_file.");
        assertThat(refused("c", "read_file", "path", "huge.txt")).startsWith("No such file or directory");

        assertThat(sha256(Path.of("/etc/passwd")) + sha256(victim)).as("host files").isEqualTo(before);
        try (var s = Files.list(outside)) {
            assertThat(s.map(p -> p.getFileName().toString())).containsExactly("victim.txt");
        }
        assertThat(Files.exists(Path.of("/new.txt"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void anIdleReapBetweenTwoCallsIsInvisible(@TempDir Path root, SandboxSpec spec) throws Exception {
        try (SandboxManager m = SandboxManager.builder().driver("docker").workspaceRoot(root)
                .idleTimeout(Duration.ofSeconds(1)).reaperInterval(Duration.ofMillis(100)).build()) {
            SandboxTools t = SandboxTools.builder(m).spec(spec).build();
            assertThat(t.execute("c", "write_file", "{\"path\":\"notes.md\",\"content\":\"step 1 done\\n\"}").error()).isFalse();
            assertThat(t.execute("c", "run_command", "{\"command\":\"echo step 2 >> notes.md\"}").text()).startsWith("Exit code: 0");
            String first = m.session(t.sessionId("c")).orElseThrow().sandboxId();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (m.session(t.sessionId("c")).orElseThrow().state() != SessionState.SUSPENDED) {
                assertThat(System.nanoTime()).as("reaped within 30 s").isLessThan(deadline);
                Thread.sleep(100);
            }
            assertThat(t.execute("c", "read_file", "{\"path\":\"notes.md\"}").text()).isEqualTo("step 1 done\nstep 2\n");
            assertThat(t.execute("c", "run_command", "{\"command\":\"cat notes.md\"}").text())
                    .isEqualTo("Exit code: 0\n--- stdout ---\nstep 1 done\nstep 2\n");
            assertThat(m.session(t.sessionId("c")).orElseThrow().sandboxId()).isNotEqualTo(first);
            m.destroy(t.sessionId("c"));
        }
    }

    private static String sha256(Path p) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)));
    }
}
