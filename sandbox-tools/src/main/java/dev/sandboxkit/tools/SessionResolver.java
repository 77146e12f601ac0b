package dev.sandboxkit.tools;

import dev.sandboxkit.tools.internal.Resolvers;

/**
 * Maps a framework's conversation id (a LangChain4j chat memory id, an MCP session, a Spring AI conversation
 * id) to the sandboxkit session id that holds that conversation's sandbox. It must be a function: the same
 * conversation always maps to the same session, so that its workspace comes back, and two conversations
 * never map to the same session, so that their files never mix.
 *
 * <p>Implementations are called on the thread that runs the tool call and must be thread-safe.
 */
@FunctionalInterface
public interface SessionResolver {

    /**
     * The session id for a conversation.
     *
     * @param conversationId the framework's id; never {@code null}
     * @return a valid session id ({@code [A-Za-z0-9][A-Za-z0-9._:@+=-]*}, at most 128 characters)
     */
    String sessionId(Object conversationId);

    /**
     * The default resolver: {@code prefix + id} for an id (its {@code toString()}) of at most 64 characters
     * from {@code [A-Za-z0-9._:@+-]} that starts with a letter or digit, else {@code prefix + "="} and 52
     * base-32 characters of the id's SHA-256. Plain results never contain {@code =} right after the prefix
     * and hashed ones always do, so no two conversation ids share a session (short of a SHA-256 collision).
     * Ids that differ only in their Java type ({@code 7} and {@code "7"}) are the same conversation.
     *
     * @param prefix put before every session id, so conversations do not collide with the application's own
     *               sessions; {@code [A-Za-z0-9][A-Za-z0-9._-]*}, at most 32 characters
     * @return the resolver
     * @throws IllegalArgumentException if the prefix is not valid
     */
    static SessionResolver prefixed(String prefix) {
        return Resolvers.prefixed(prefix);
    }
}
