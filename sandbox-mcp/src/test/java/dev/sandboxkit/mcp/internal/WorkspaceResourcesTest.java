package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.util.McpUriTemplateManager;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WorkspaceResourcesTest {

    @Test
    void theTemplateMatchesNestedPaths() {
        McpUriTemplateManager m = WorkspaceResources.templateFactory().create(WorkspaceResources.TEMPLATE);
        assertThat(m.matches("sandbox://workspace/a/b/c.txt")).isTrue();
        assertThat(m.matches("sandbox://workspace/")).isTrue();
        assertThat(m.matches("sandbox://other/a")).isFalse();
        assertThat(m.extractVariableValues("sandbox://workspace/a/b.txt")).isEqualTo(Map.of("path", "a/b.txt"));
        assertThat(m.getVariableNames()).containsExactly("path");
    }

    @Test
    void pathsArePercentDecoded() {
        assertThat(WorkspaceResources.path("sandbox://workspace/src/main.py")).isEqualTo("src/main.py");
        assertThat(WorkspaceResources.path("sandbox://workspace/my%20notes/%C3%A9t%C3%A9.md")).isEqualTo("my notes/été.md");
        assertThat(WorkspaceResources.path("sandbox://workspace/été.md")).isEqualTo("été.md");
        assertThat(WorkspaceResources.path("sandbox://workspace/")).isEmpty();
    }

    @Test
    void badUrisAreInvalidParams() {
        for (String uri : new String[]{"sandbox://workspace/a%2", "sandbox://workspace/a%zz", "sandbox://workspace/a?x=1",
                "sandbox://workspace/%FF"}) {
            assertThatThrownBy(() -> WorkspaceResources.path(uri)).as(uri).isInstanceOfSatisfying(McpError.class,
                    e -> assertThat(e.getJsonRpcError().code()).isEqualTo(JsonRpc.INVALID_PARAMS));
        }
        assertThatThrownBy(() -> WorkspaceResources.path("file:///etc/passwd")).isInstanceOfSatisfying(McpError.class,
                e -> assertThat(e.getJsonRpcError().code()).isEqualTo(-32002));
    }
}
