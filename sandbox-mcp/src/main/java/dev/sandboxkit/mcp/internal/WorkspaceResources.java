package dev.sandboxkit.mcp.internal;

import dev.sandboxkit.FileInfo;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.tools.SandboxTools;
import io.modelcontextprotocol.server.McpServerFeatures.SyncResourceTemplateSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.util.DefaultMcpUriTemplateManagerFactory;
import io.modelcontextprotocol.util.McpUriTemplateManager;
import io.modelcontextprotocol.util.McpUriTemplateManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayOutputStream;
import java.net.URLConnection;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The files of an MCP session's workspace as MCP resources, through one resource template,
 * {@value #TEMPLATE}: {@code sandbox://workspace/src/main.py} reads {@code /workspace/src/main.py}, and a
 * directory ({@code sandbox://workspace/} is the workspace itself) reads as a listing. Text comes back as text,
 * anything that is not UTF-8 as a base64 blob, at most {@value #MAX_BYTES} bytes.
 *
 * <p>Reads go through the manager's files API: nothing starts or resumes a container, a reaped session's files
 * are readable, and nothing outside the workdir is reachable (links are never followed). A session that has not
 * run a tool yet has no workspace: its reads are "resource not found".
 *
 * <p>{@code resources/list} ({@link #list}, answered by the {@link Gate}: the SDK knows only resources fixed at
 * start) names the session's regular files, depth first in path order, {@value #PAGE} per page, at most
 * {@value #MAX_LISTED} in all and {@value #MAX_DEPTH} directories deep; {@code .git} and {@code node_modules} are
 * not entered. Any other file is still read through the template.
 */
public final class WorkspaceResources {
    /** The URI prefix of workspace files. */
    public static final String PREFIX = "sandbox://workspace/";
    /** The resource template. */
    public static final String TEMPLATE = PREFIX + "{+path}";
    /** Largest file read as a resource: text or base64 must fit the clients' default 16 MiB message. */
    public static final int MAX_BYTES = 10_000_000;
    /** Resources per {@code resources/list} page. */
    public static final int PAGE = 100;
    /** The most files {@code resources/list} names, over all its pages. */
    public static final int MAX_LISTED = 1000;
    /** How many directories deep {@code resources/list} looks. */
    public static final int MAX_DEPTH = 10;
    private static final Set<String> NOT_ENTERED = Set.of(".git", "node_modules");
    private static final String CURSOR_PREFIX = "files:";

    private static final Logger log = LoggerFactory.getLogger(WorkspaceResources.class);

    private WorkspaceResources() {
    }

    /**
     * The template specification.
     *
     * @param tools    the tool set, whose manager holds the workspaces
     * @param sessions maps each read's MCP session to its conversation
     * @return the specification
     */
    public static SyncResourceTemplateSpecification template(SandboxTools tools, Sessions sessions) {
        McpSchema.ResourceTemplate template = McpSchema.ResourceTemplate.builder(TEMPLATE, "workspace-file")
                .title("Sandbox workspace file")
                .description("A file (or directory listing) of this session's sandbox workspace, /workspace. "
                        + "sandbox://workspace/ is the workspace itself; paths are relative to it.")
                .build();
        return new SyncResourceTemplateSpecification(template, (exchange, request) -> read(tools, sessions, exchange,
                request.uri()));
    }

    /**
     * A template matcher whose last variable may span several path segments: the SDK's default matches one
     * segment per variable, so {@code sandbox://workspace/a/b.txt} would not match {@value #TEMPLATE}.
     *
     * @return the factory for {@code McpServer...uriTemplateManagerFactory(..)}
     */
    public static McpUriTemplateManagerFactory templateFactory() {
        McpUriTemplateManagerFactory fallback = new DefaultMcpUriTemplateManagerFactory();
        return uriTemplate -> {
            int open = uriTemplate.indexOf('{');
            if (open < 0 || open != uriTemplate.lastIndexOf('{') || !uriTemplate.endsWith("}")) {
                return fallback.create(uriTemplate);
            }
            String prefix = uriTemplate.substring(0, open);
            String name = uriTemplate.substring(open + 1, uriTemplate.length() - 1).replace("+", "");
            return new McpUriTemplateManager() {
                @Override
                public List<String> getVariableNames() {
                    return List.of(name);
                }

                @Override
                public Map<String, String> extractVariableValues(String uri) {
                    return matches(uri) ? Map.of(name, uri.substring(prefix.length())) : Map.of();
                }

                @Override
                public boolean matches(String uri) {
                    return uri != null && uri.startsWith(prefix);
                }

                @Override
                public boolean isUriTemplate(String uri) {
                    return uri != null && uri.contains("{");
                }
            };
        };
    }

    static McpSchema.ReadResourceResult read(SandboxTools tools, Sessions sessions, McpSyncServerExchange exchange,
                                             String uri) {
        String path = path(uri);
        Sessions.Use use;
        try {
            use = sessions.enter(exchange.sessionId(), ToolBridge.sessionKey(exchange));
        } catch (Sessions.KeyMismatchException e) {
            throw McpError.builder(JsonRpc.INVALID_PARAMS).message(e.getMessage()).build();
        }
        try {
            SandboxFiles files = tools.manager().files(tools.sessionId(use.conversation()));
            FileInfo info = files.stat(path);
            if (info.isDirectory()) {
                return text(uri, "text/plain", listing(files.list(path)));
            }
            if (!info.isFile()) {
                throw invalid(uri, "not a regular file or directory (" + info.type().name().toLowerCase() + ")");
            }
            if (info.size() > MAX_BYTES) {
                throw invalid(uri, "the file has " + info.size() + " bytes, more than the " + MAX_BYTES
                        + " a resource read returns; use the read_file tool with line ranges");
            }
            byte[] content = files.readBytes(path);
            String text = utf8(content);
            String mime = URLConnection.getFileNameMap().getContentTypeFor(info.name());
            if (text != null) {
                return text(uri, mime != null ? mime : "text/plain", text);
            }
            return new McpSchema.ReadResourceResult(List.of(new McpSchema.BlobResourceContents(uri,
                    mime != null ? mime : "application/octet-stream", Base64.getEncoder().encodeToString(content), null)),
                    null);
        } catch (SandboxNotFoundException e) {
            throw McpError.RESOURCE_NOT_FOUND.apply(uri);
        } catch (SandboxFileException e) {
            if (e.reason() == SandboxFileException.Reason.UNSUPPORTED || e.reason() == SandboxFileException.Reason.IO_ERROR) {
                throw operator(uri, e);
            }
            throw invalid(uri, e.reason().name().toLowerCase().replace('_', ' ') + ": " + JsonRpc.cut(e.getMessage()));
        } catch (SandboxException e) {
            throw operator(uri, e);
        } finally {
            sessions.exit(use);
        }
    }

    /**
     * One page of the session's workspace files as resources.
     *
     * @param tools        the tool set, whose manager holds the workspaces
     * @param sessions     maps the MCP session to its conversation
     * @param mcpSessionId the MCP session
     * @param sessionKey   the key the request carries, or {@code null}
     * @param cursor       the previous page's {@code nextCursor}, or {@code null} for the first page
     * @return the page; {@code nextCursor} is set while more files follow
     * @throws McpError {@code -32602} for a cursor this server did not hand out or a session key that does not fit;
     *                  {@code -32603} if the backend fails
     */
    public static McpSchema.ListResourcesResult list(SandboxTools tools, Sessions sessions, String mcpSessionId,
                                                     String sessionKey, String cursor) {
        int offset = offset(cursor);
        Sessions.Use use;
        try {
            use = sessions.enter(mcpSessionId, sessionKey);
        } catch (Sessions.KeyMismatchException e) {
            throw McpError.builder(JsonRpc.INVALID_PARAMS).message(e.getMessage()).build();
        }
        List<FileInfo> found = new ArrayList<>();
        try {
            SandboxFiles files = tools.manager().files(tools.sessionId(use.conversation()));
            walk(files, "", 1, Math.min(offset + PAGE + 1, MAX_LISTED), found);
        } catch (SandboxNotFoundException e) {
            found.clear(); // no workspace yet: no tool has run in this session
        } catch (SandboxException e) {
            throw operator(PREFIX, e);
        } finally {
            sessions.exit(use);
        }
        List<McpSchema.Resource> page = new ArrayList<>();
        for (int i = offset; i < Math.min(found.size(), offset + PAGE); i++) {
            FileInfo f = found.get(i);
            String mime = URLConnection.getFileNameMap().getContentTypeFor(f.name());
            page.add(McpSchema.Resource.builder(uri(f.path()), f.path()).mimeType(mime).size(f.size()).build());
        }
        boolean more = found.size() > offset + PAGE;
        return McpSchema.ListResourcesResult.builder(page).nextCursor(more ? CURSOR_PREFIX + (offset + PAGE) : null)
                .build();
    }

    private static int offset(String cursor) {
        if (cursor == null) {
            return 0;
        }
        try {
            int n = cursor.startsWith(CURSOR_PREFIX) ? Integer.parseInt(cursor.substring(CURSOR_PREFIX.length())) : -1;
            if (n >= 0 && n < MAX_LISTED && n % PAGE == 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // not one of ours
        }
        throw McpError.builder(JsonRpc.INVALID_PARAMS).message("Invalid params: unknown cursor \"" + JsonRpc.cut(cursor)
                + "\"; pass the nextCursor of the previous page").build();
    }

    /** Regular files, depth first in path order, until {@code limit} are found. */
    private static void walk(SandboxFiles files, String dir, int depth, int limit, List<FileInfo> out) {
        for (FileInfo e : files.list(dir)) {
            if (out.size() >= limit) {
                return;
            }
            if (e.isFile()) {
                out.add(e);
            } else if (e.isDirectory() && depth < MAX_DEPTH && !NOT_ENTERED.contains(e.name())) {
                try {
                    walk(files, e.path(), depth + 1, limit, out);
                } catch (SandboxFileException unreadable) {
                    if (unreadable.reason() == SandboxFileException.Reason.IO_ERROR
                            || unreadable.reason() == SandboxFileException.Reason.UNSUPPORTED) {
                        throw unreadable;
                    }
                    // a directory the sandbox made unlistable (mode, too many entries): its files are left out
                } catch (SandboxNotFoundException gone) {
                    // removed while listed
                }
            }
        }
    }

    /** The URI of a workspace path: each segment percent-encoded (RFC 3986 unreserved characters stay). */
    static String uri(String path) {
        StringBuilder b = new StringBuilder(PREFIX);
        for (byte x : path.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
                    || c == '_' || c == '~' || c == '/') {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return b.toString();
    }

    /** The workspace path a URI names, percent-decoded. */
    static String path(String uri) {
        if (uri == null || !uri.startsWith(PREFIX)) {
            throw McpError.RESOURCE_NOT_FOUND.apply(String.valueOf(uri));
        }
        String raw = uri.substring(PREFIX.length());
        if (raw.indexOf('?') >= 0 || raw.indexOf('#') >= 0) {
            throw invalid(uri, "a workspace URI has no query or fragment");
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(raw.length());
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c == '%') {
                if (i + 2 >= raw.length() || Character.digit(raw.charAt(i + 1), 16) < 0
                        || Character.digit(raw.charAt(i + 2), 16) < 0) {
                    throw invalid(uri, "bad percent-encoding");
                }
                bytes.write(Character.digit(raw.charAt(i + 1), 16) * 16 + Character.digit(raw.charAt(i + 2), 16));
                i += 2;
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                if (Character.isHighSurrogate(c) && i + 1 < raw.length()) {
                    b = raw.substring(i, i + 2).getBytes(StandardCharsets.UTF_8);
                    i++;
                }
                bytes.writeBytes(b);
            }
        }
        String path = utf8(bytes.toByteArray());
        if (path == null) {
            throw invalid(uri, "the percent-encoded path is not UTF-8");
        }
        return path;
    }

    private static String listing(List<FileInfo> entries) {
        if (entries.isEmpty()) {
            return "(empty directory)\n";
        }
        StringBuilder b = new StringBuilder();
        for (FileInfo f : entries) {
            b.append(f.name());
            switch (f.type()) {
                case DIRECTORY -> b.append('/');
                case FILE -> b.append("  (").append(f.size()).append(" bytes)");
                case SYMLINK -> b.append(" -> ").append(f.linkTarget());
                default -> b.append("  (").append(f.type().name().toLowerCase()).append(')');
            }
            b.append('\n');
        }
        return b.toString();
    }

    private static String utf8(byte[] content) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(content)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static McpSchema.ReadResourceResult text(String uri, String mime, String text) {
        return new McpSchema.ReadResourceResult(List.of(new McpSchema.TextResourceContents(uri, mime, text, null)), null);
    }

    private static McpError invalid(String uri, String why) {
        return McpError.builder(JsonRpc.INVALID_PARAMS).message("Cannot read " + uri + ": " + why)
                .data(Map.of("uri", uri)).build();
    }

    private static McpError operator(String uri, SandboxException e) {
        log.warn("Reading {} failed: {}", uri, e.toString());
        return McpError.builder(JsonRpc.INTERNAL_ERROR).message(ToolBridge.unavailable(e)).data(Map.of("uri", uri,
                ToolBridge.META_RETRYABLE, e.isRetryable())).build();
    }
}
