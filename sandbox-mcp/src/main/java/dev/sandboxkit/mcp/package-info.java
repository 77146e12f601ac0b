/**
 * sandbox-mcp: an MCP server that gives any MCP client the sandboxkit tools with a persistent workspace.
 * {@link dev.sandboxkit.mcp.SandboxMcpMain} is the command ({@code java -jar sandbox-mcp-VERSION-all.jar});
 * {@link dev.sandboxkit.mcp.SandboxMcpServer} embeds the same server in an application, over its own
 * {@link dev.sandboxkit.tools.SandboxTools}.
 */
package dev.sandboxkit.mcp;
