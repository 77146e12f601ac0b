package dev.sandboxkit.tools.internal;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.tools.SandboxTool;
import dev.sandboxkit.tools.SessionResolver;

import java.time.Duration;
import java.util.Set;

/**
 * Everything a tool set was built with, checked by its builder.
 *
 * @param manager        where the sandboxes live
 * @param spec           what every conversation's sandbox runs
 * @param resolver       conversation id to session id
 * @param tools          the tools offered, read-only mode already applied
 * @param readOnly       whether the set was built read-only
 * @param outputLimit    bytes of each output stream the model sees (head and tail)
 * @param readLimit      bytes one read_file call returns at most
 * @param writeLimit     bytes one write_file or edit_file may write
 * @param defaultTimeout run_command's timeout when the model gives none
 * @param maxTimeout     the longest timeout the model may ask for
 * @param listLimit      entries one list_files call shows at most
 * @param searchLimit    matches one search_files call returns at most
 */
public record ToolSettings(SandboxManager manager, SandboxSpec spec, SessionResolver resolver, Set<SandboxTool> tools,
                           boolean readOnly, int outputLimit, int readLimit, long writeLimit, Duration defaultTimeout,
                           Duration maxTimeout, int listLimit, int searchLimit) {

    /** Copies. */
    public ToolSettings {
        tools = Set.copyOf(tools);
    }
}
