package dev.sandboxkit.mcp.internal;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionInfo;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.testkit.FakeDriver;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.SessionResolver;
import io.modelcontextprotocol.spec.McpError;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SessionsTest {
    private final FakeDriver driver = new FakeDriver();
    private SandboxManager manager;
    private SandboxTools tools;

    @TempDir
    Path root;

    private SandboxTools tools() {
        if (tools == null) {
            manager = SandboxManager.builder().driver(driver).workspaceRoot(root).build();
            tools = SandboxTools.builder(manager).spec(SandboxSpec.builder().image("fake:1").build())
                    .resolver(SessionResolver.prefixed("mcp-")).build();
        }
        return tools;
    }

    @AfterEach
    void close() {
        if (manager != null) {
            manager.close();
        }
    }

    private static void open(Sessions s, String id) {
        s.reserve().open(id, null);
    }

    private Optional<SessionInfo> info(String conversation) {
        return manager.session(tools.sessionId(conversation));
    }

    @Test
    void pastTheLimitANewSessionIsRefusedUntilOneCloses() {
        Sessions s = new Sessions(tools(), 2, null);
        open(s, "a");
        Sessions.Slot pending = s.reserve();
        assertThatThrownBy(s::reserve).isInstanceOf(Sessions.SessionLimitException.class)
                .hasMessageContaining("maximum of 2");
        pending.cancel();
        open(s, "b");
        assertThat(s.openCount()).isEqualTo(2);
        s.closed("a");
        s.closed("a"); // twice: one place freed
        open(s, "c");
        assertThat(s.openCount()).isEqualTo(2);
        assertThatThrownBy(s::reserve).isInstanceOf(Sessions.SessionLimitException.class);
        assertThat(new Sessions.SessionLimitException("x").isRetryable()).isTrue();
    }

    @Test
    void theFirstCallFixesTheConversationAndTheKeyCannotChange() {
        Sessions s = new Sessions(tools(), 4, null);
        open(s, "unkeyed");
        open(s, "keyed");
        assertThat(enter(s, "unkeyed", null)).isEqualTo("s.unkeyed");
        assertThatThrownBy(() -> s.enter("unkeyed", "late")).isInstanceOf(Sessions.KeyMismatchException.class);
        assertThat(enter(s, "keyed", "conv-1")).isEqualTo("k.conv-1");
        assertThat(enter(s, "keyed", null)).isEqualTo("k.conv-1");
        assertThat(enter(s, "keyed", "conv-1")).isEqualTo("k.conv-1");
        assertThatThrownBy(() -> s.enter("keyed", "conv-2")).isInstanceOf(Sessions.KeyMismatchException.class);
        assertThatThrownBy(() -> s.enter("never-opened", null)).isInstanceOf(McpError.class);
        assertThatThrownBy(() -> s.enter("keyed2", "x".repeat(300))).isInstanceOf(McpError.class);
        open(s, "keyed2");
        assertThatThrownBy(() -> s.enter("keyed2", "x".repeat(300))).isInstanceOf(McpError.class);
    }

    @Test
    void aKeyGivenWhenTheSessionOpensBindsIt() {
        Sessions s = new Sessions(tools(), 2, null);
        s.reserve().open("h", "from-initialize");
        assertThat(enter(s, "h", null)).isEqualTo("k.from-initialize");
        assertThat(enter(s, "h", "from-initialize")).isEqualTo("k.from-initialize");
        assertThatThrownBy(() -> s.enter("h", "another")).isInstanceOf(Sessions.KeyMismatchException.class);
        Sessions.Slot slot = s.reserve();
        slot.open("i", "");
        assertThatThrownBy(() -> slot.open("j", null)).isInstanceOf(IllegalStateException.class);
        assertThat(enter(s, "i", null)).isEqualTo("s.i");
    }

    @Test
    void aFixedKeyIsEverySessionsKey() {
        Sessions s = new Sessions(tools(), 1, "project-7");
        open(s, "stdio");
        assertThat(enter(s, "stdio", null)).isEqualTo("k.project-7");
        assertThatThrownBy(() -> new Sessions(tools(), 1, "bad\nkey")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void closingReleasesAKeyedSandboxAndDestroysAnUnkeyedOne() {
        Sessions s = new Sessions(tools(), 4, null);
        open(s, "k");
        open(s, "u");
        open(s, "idle");
        String keyed = enter(s, "k", "kept");
        String unkeyed = enter(s, "u", null);
        tools.sandbox(keyed);
        tools.sandbox(unkeyed);
        String keyedWorkspace = info(keyed).orElseThrow().workspace();
        String unkeyedWorkspace = info(unkeyed).orElseThrow().workspace();

        s.closed("k");
        s.closed("u");
        s.closed("idle"); // never called a tool: nothing to clean up

        assertThat(info(keyed)).get().extracting(SessionInfo::state).isNotIn(SessionState.DESTROYED,
                SessionState.DESTROYING);
        assertThat(driver.workspaceExists(keyedWorkspace)).isTrue();
        assertThat(info(unkeyed)).get().extracting(SessionInfo::state).isEqualTo(SessionState.DESTROYED);
        assertThat(driver.workspaceExists(unkeyedWorkspace)).isFalse();
        assertThatThrownBy(() -> s.enter("u", null)).isInstanceOf(McpError.class);
    }

    @Test
    void aCallRacingTheCloseDoesNotLeaveASandboxBehind() {
        Sessions s = new Sessions(tools(), 1, null);
        open(s, "u");
        Sessions.Use use = s.enter("u", null);
        s.closed("u"); // the client went away while the call was starting
        tools.sandbox(use.conversation()); // the call's acquire, after the close: a new session
        assertThat(info(use.conversation())).get().extracting(SessionInfo::state).isEqualTo(SessionState.ACTIVE);
        s.exit(use); // the last call out cleans up again
        assertThat(info(use.conversation())).get().extracting(SessionInfo::state).isEqualTo(SessionState.DESTROYED);
    }

    @Test
    void afterShutdownNoSessionOpens() {
        Sessions s = new Sessions(tools(), 4, null);
        s.shutdown();
        assertThatThrownBy(s::reserve).isInstanceOf(Sessions.SessionLimitException.class)
                .hasMessageContaining("shutting down");
    }

    private static String enter(Sessions s, String id, String key) {
        Sessions.Use use = s.enter(id, key);
        s.exit(use);
        return use.conversation();
    }
}
