/**
 * The MCP server: exports only {@link dev.sandboxkit.mcp} ({@code SandboxMcpServer} to embed, {@code SandboxMcpMain}
 * to run). The session mapping, the stdio guard and the HTTP endpoint ({@code dev.sandboxkit.mcp.internal}) are not
 * exported.
 */
module dev.sandboxkit.mcp {
    requires transitive dev.sandboxkit;
    requires transitive dev.sandboxkit.tools;
    // The MCP SDK: mcp-core has no descriptor, io.modelcontextprotocol.sdk.mcp.core is its Automatic-Module-Name;
    // its JSON mapper (mcp-json-jackson3) is found through ServiceLoader.
    requires io.modelcontextprotocol.sdk.mcp.core;
    // The SDK's jars are automatic modules, which cannot declare what they need: its default JSON mapper (found
    // through ServiceLoader) needs Jackson 3 and its schema validator, named modules that nothing else requires, so
    // without these two lines neither is resolved on the module path (ModularSmoke in the examples checks it).
    requires tools.jackson.databind;
    requires com.networknt.schema;
    requires reactor.core;
    requires jakarta.servlet;
    requires org.eclipse.jetty.server;
    requires org.eclipse.jetty.http;
    requires org.eclipse.jetty.util;
    requires org.eclipse.jetty.ee11.servlet;
    requires org.slf4j;
    // SIGTERM handling through sun.misc.Signal, looked up by reflection.
    requires jdk.unsupported;
    // Optional, as in the pom: the command line and the durable store of the runnable server.
    requires static info.picocli;
    requires static dev.sandboxkit.store.jdbc;

    // --show-config lists the settings of the drivers found.
    uses dev.sandboxkit.spi.SandboxDriverProvider;

    exports dev.sandboxkit.mcp;
    // picocli sets the command's @Option fields by reflection.
    opens dev.sandboxkit.mcp to info.picocli;
}
