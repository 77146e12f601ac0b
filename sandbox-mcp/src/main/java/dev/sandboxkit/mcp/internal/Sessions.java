package dev.sandboxkit.mcp.internal;

import dev.sandboxkit.SandboxException;
import dev.sandboxkit.tools.SandboxTools;
import io.modelcontextprotocol.spec.McpError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Which sandbox session each MCP session works in, how many MCP sessions are open, and what happens to a
 * sandbox when its MCP session closes.
 *
 * <p><b>Conversations.</b> A session key (the stdio {@code --session-key}, or the {@value #SESSION_HEADER} header
 * of an HTTP session's {@code initialize}, else of its first tool call or resource read) names the conversation
 * {@code k.<key>}: any later MCP session with the same key reattaches to the same workspace, across
 * reconnects and server restarts. Without a key the conversation is {@code s.<MCP session id>}: nobody can ever
 * reattach to it.
 *
 * <p><b>Closing.</b> When an MCP session closes, a keyed sandbox is released (its container stays until the idle
 * TTL, its workdir stays for the next reattach); an unkeyed one is destroyed, container and workdir, since no
 * client can name it again and its files would only pile up. Unkeyed sandboxes are also
 * {@linkplain dev.sandboxkit.SandboxSpec#managerScoped() manager-scoped}: if the server dies without closing them,
 * the next server sharing its store destroys them, workdir included. A call still running at that moment does not
 * outlive the cleanup: the last call out of a closed session cleans up once more, so a sandbox created by a call
 * that raced the close is not left behind either.
 *
 * <p>Thread-safe.
 */
public final class Sessions {
    /** The HTTP header that carries a session key. */
    public static final String SESSION_HEADER = "X-Sandbox-Session";
    /** The transport-context key the HTTP context extractor stores the header under. */
    public static final String KEY_CONTEXT = "dev.sandboxkit.sessionKey";
    /** Longest accepted session key, in characters. */
    public static final int MAX_KEY_LENGTH = 256;

    private static final Logger log = LoggerFactory.getLogger(Sessions.class);

    private final SandboxTools tools;
    /** The tools of unkeyed conversations: manager-scoped, so a server that dies leaves no workdir of theirs behind. */
    private final SandboxTools unkeyedTools;
    private final int maxSessions;
    private final String fixedKey;
    private final Map<String, Entry> open = new ConcurrentHashMap<>();
    private final AtomicInteger reserved = new AtomicInteger();
    private volatile boolean closing;

    /**
     * Sessions over a tool set.
     *
     * @param tools       the tool set whose conversations the sessions are
     * @param maxSessions the most MCP sessions open at once, at least 1
     * @param fixedKey    the key every session uses (stdio's {@code --session-key}), or {@code null}
     */
    public Sessions(SandboxTools tools, int maxSessions, String fixedKey) {
        this.tools = Objects.requireNonNull(tools, "tools");
        this.unkeyedTools = tools.spec().managerScoped() ? tools
                : tools.withSpec(tools.spec().toBuilder().managerScoped(true).build());
        if (maxSessions < 1) {
            throw new IllegalArgumentException("maxSessions must be at least 1, got " + maxSessions);
        }
        this.maxSessions = maxSessions;
        this.fixedKey = fixedKey == null ? null : checkKey(fixedKey);
    }

    /**
     * Checks a session key: 1 to {@value #MAX_KEY_LENGTH} characters, no control characters.
     *
     * @param key the key
     * @return the key
     * @throws IllegalArgumentException if it is not acceptable
     */
    public static String checkKey(String key) {
        if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("a session key must have 1 to " + MAX_KEY_LENGTH + " characters, got "
                    + key.length());
        }
        for (int i = 0; i < key.length(); i++) {
            if (Character.isISOControl(key.charAt(i))) {
                throw new IllegalArgumentException("a session key must not contain control characters");
            }
        }
        return key;
    }

    /**
     * Takes a place for a new MCP session, before the SDK creates it.
     *
     * @return the place; {@link Slot#open(String, String)} or {@link Slot#cancel()} it
     * @throws SessionLimitException if {@code maxSessions} are open already, or the server is closing
     */
    public Slot reserve() {
        if (closing) {
            throw new SessionLimitException("sandbox-mcp is shutting down; connect again later");
        }
        int n = reserved.incrementAndGet();
        if (n > maxSessions) {
            reserved.decrementAndGet();
            throw new SessionLimitException("sandbox-mcp already serves its maximum of " + maxSessions
                    + " MCP sessions (--max-sessions); close one, or try again later");
        }
        return new Slot();
    }

    /**
     * The number of open MCP sessions (reserved places included).
     *
     * @return the count
     */
    public int openCount() {
        return reserved.get();
    }

    /**
     * Whether an MCP session is open here.
     *
     * @param mcpSessionId the SDK's session id
     * @return {@code true} between its start and its close
     */
    public boolean isOpen(String mcpSessionId) {
        return open.containsKey(mcpSessionId);
    }

    /**
     * Whether the server is shutting down ({@link #shutdown()} was called).
     *
     * @return {@code true} once shutting down
     */
    public boolean isClosing() {
        return closing;
    }

    /**
     * Starts a call (tool or resource) of an MCP session: finds, or on the first call fixes, its conversation.
     *
     * @param mcpSessionId  the SDK's session id ({@code exchange.sessionId()})
     * @param requestedKey  the key this request carries, or {@code null}
     * @return the use, to {@link #exit(Use)} in a {@code finally}
     * @throws McpError            if the session is unknown or closed
     * @throws KeyMismatchException if the request names a different key than the session is bound to
     */
    public Use enter(String mcpSessionId, String requestedKey) {
        Entry e = mcpSessionId == null ? null : open.get(mcpSessionId);
        if (e == null) {
            throw McpError.builder(JsonRpc.INVALID_REQUEST).message("This MCP session is closed; reconnect").build();
        }
        String key = requestedKey == null || requestedKey.isEmpty() ? null : requestedKey;
        synchronized (e) {
            if (e.closed) {
                throw McpError.builder(JsonRpc.INVALID_REQUEST).message("This MCP session is closed; reconnect").build();
            }
            if (e.conversation == null) {
                String bound = fixedKey != null ? fixedKey : key;
                if (bound != null) {
                    checkKeyForClient(bound);
                    e.bind(bound);
                } else {
                    e.conversation = "s." + mcpSessionId;
                }
            } else if (key != null && !key.equals(e.key)) {
                throw new KeyMismatchException(e.key == null
                        ? "This MCP session already works in a workspace of its own; the " + SESSION_HEADER
                          + " header must be sent from the session's first call on. Reconnect to use a key."
                        : "This MCP session is bound to another session key; the " + SESSION_HEADER
                          + " header cannot change within a session. Reconnect to switch workspaces.");
            }
            e.inFlight++;
            return new Use(e, e.conversation, e.keyed ? tools : unkeyedTools);
        }
    }

    /**
     * Ends a call. If its session closed meanwhile and this was its last call, cleans up once more.
     *
     * @param use what {@link #enter} returned
     */
    public void exit(Use use) {
        Entry e = use.entry;
        boolean cleanUp;
        synchronized (e) {
            e.inFlight--;
            cleanUp = e.closed && e.inFlight == 0;
        }
        if (cleanUp) {
            cleanUp(e);
        }
    }

    /**
     * Marks an MCP session closed and releases (keyed) or destroys (unkeyed) its sandbox. Idempotent; calls of the
     * session still running are not waited for.
     *
     * @param mcpSessionId the SDK's session id
     */
    public void closed(String mcpSessionId) {
        Entry e = open.remove(mcpSessionId);
        if (e == null) {
            return;
        }
        reserved.decrementAndGet();
        synchronized (e) {
            e.closed = true;
        }
        cleanUp(e);
    }

    /**
     * Refuses new sessions from now on (server shutdown).
     */
    public void shutdown() {
        closing = true;
    }

    private void cleanUp(Entry e) {
        String conversation;
        boolean keyed;
        synchronized (e) {
            conversation = e.conversation;
            keyed = e.keyed;
        }
        if (conversation == null) {
            return; // never called a tool: no sandbox
        }
        // The SDK disposes (interrupts) the thread that closes a session when the server shuts down, which would
        // cut the engine calls short and leave an unkeyed workdir behind: run with the flag cleared, again if an
        // interrupt arrives meanwhile (a destroy finishes what an earlier one began), and restore it after.
        boolean interrupted = Thread.interrupted();
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    if (keyed) {
                        tools.release(conversation);
                    } else {
                        tools.manager().destroy(tools.sessionId(conversation));
                    }
                    break;
                } catch (SandboxException ex) {
                    if (!Thread.interrupted() || attempt == 3) {
                        throw ex;
                    }
                    interrupted = true;
                }
            }
        } catch (SandboxException | IllegalArgumentException ex) {
            // The engine or the store failing now leaves the sandbox to the idle reaper and the orphan sweep.
            log.warn("Could not {} the sandbox of MCP session {}: {}", keyed ? "release" : "destroy", e.mcpSessionId,
                    ex.toString());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void checkKeyForClient(String key) {
        try {
            checkKey(key);
        } catch (IllegalArgumentException ex) {
            throw McpError.builder(JsonRpc.INVALID_PARAMS).message("Invalid " + SESSION_HEADER + ": " + ex.getMessage())
                    .build();
        }
    }

    /** A reserved place for one MCP session. */
    public final class Slot {
        private boolean done;

        private Slot() {
        }

        /**
         * Records the session the SDK created in this place.
         *
         * @param mcpSessionId its id
         * @param key          the session key it starts with (checked), or {@code null} to decide on its first call
         */
        public synchronized void open(String mcpSessionId, String key) {
            if (done) {
                throw new IllegalStateException("slot already used");
            }
            done = true;
            Entry e = new Entry(mcpSessionId);
            String bound = fixedKey != null ? fixedKey : key == null || key.isEmpty() ? null : key;
            if (bound != null) {
                e.bind(bound);
            }
            if (open.putIfAbsent(mcpSessionId, e) != null) {
                reserved.decrementAndGet();
                throw new IllegalStateException("MCP session " + mcpSessionId + " is open already");
            }
        }

        /** Gives the place back: the SDK did not create the session. */
        public synchronized void cancel() {
            if (!done) {
                done = true;
                reserved.decrementAndGet();
            }
        }
    }

    /** One call's hold on its MCP session. */
    public static final class Use {
        private final Entry entry;
        private final String conversation;
        private final SandboxTools tools;

        private Use(Entry entry, String conversation, SandboxTools tools) {
            this.entry = entry;
            this.conversation = conversation;
            this.tools = tools;
        }

        /**
         * The tool set the call runs with: the server's, or for an unkeyed conversation the same set whose sandbox is
         * {@linkplain dev.sandboxkit.SandboxSpec#managerScoped() manager-scoped}.
         *
         * @return the tool set
         */
        public SandboxTools tools() {
            return tools;
        }

        /**
         * The conversation the call works in, for {@link SandboxTools}.
         *
         * @return {@code k.<key>} or {@code s.<MCP session id>}
         */
        public String conversation() {
            return conversation;
        }
    }

    /** State of one open MCP session, guarded by itself. */
    private static final class Entry {
        final String mcpSessionId;
        String conversation;
        String key;
        boolean keyed;
        boolean closed;
        int inFlight;

        Entry(String mcpSessionId) {
            this.mcpSessionId = mcpSessionId;
        }

        void bind(String sessionKey) {
            key = sessionKey;
            keyed = true;
            conversation = "k." + sessionKey;
        }
    }

    /** The session limit was reached (or the server is closing): the client is told so at once. Retryable. */
    public static final class SessionLimitException extends SandboxException {
        private static final long serialVersionUID = 1L;

        SessionLimitException(String message) {
            super(message);
        }

        /**
         * A place may free up.
         *
         * @return {@code true}
         */
        @Override
        public boolean isRetryable() {
            return true;
        }
    }

    /** A request named a different session key than its MCP session is bound to: a tool error for the client. */
    public static final class KeyMismatchException extends SandboxException {
        private static final long serialVersionUID = 1L;

        KeyMismatchException(String message) {
            super(message);
        }
    }
}
