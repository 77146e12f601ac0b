/**
 * The server's parts, not an API: session bookkeeping ({@link dev.sandboxkit.mcp.internal.Sessions}), the tool and
 * resource bridges to the MCP SDK, the stdin guard, the SDK provider wrappers that report session closes, and the
 * embedded HTTP endpoint with its access and error filters. May change in any release.
 */
package dev.sandboxkit.mcp.internal;
