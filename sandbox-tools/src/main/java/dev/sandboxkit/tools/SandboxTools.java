package dev.sandboxkit.tools;

import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.ConfigValues;
import dev.sandboxkit.tools.internal.ModelInstructions;
import dev.sandboxkit.tools.internal.Toolbox;
import dev.sandboxkit.tools.internal.ToolSettings;
import org.jspecify.annotations.Nullable;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The tools a model gets to work in a sandbox: {@code run_command}, {@code read_file}, {@code write_file},
 * {@code edit_file}, {@code list_files} and {@code search_files}, each with a description and a JSON schema
 * written for a model, and results rendered for one. Framework adapters (LangChain4j, MCP, Spring AI) expose
 * this one set; it holds no framework types.
 *
 * <p>Every call names a <em>conversation</em>: the {@link SessionResolver} maps it to a session of the
 * manager, which is created on its first call, reused while it lives, and resumed on the same workdir after an
 * idle reap, so the conversation's files persist and the model never notices. File tools go through the
 * manager's escape-proof files API ({@link dev.sandboxkit.SandboxFiles}), never through the shell.
 *
 * <p><b>Failures.</b> What the model can fix (a bad path, a missing file, an {@code edit_file} string that is
 * not unique, invalid arguments, an unknown tool) comes back as a {@link ToolResult} marked
 * {@linkplain ToolResult#error() error}. A non-zero exit code or a timeout is an ordinary result. What only an
 * operator can fix is thrown as the library's typed exceptions: {@link dev.sandboxkit.SandboxUnavailableException}
 * (engine down, retryable), {@link dev.sandboxkit.SessionStoreException}, {@link dev.sandboxkit.SandboxAcquireException}
 * (image missing, session held by another manager), and {@link dev.sandboxkit.SandboxFileException} with reason
 * {@code UNSUPPORTED} or {@code IO_ERROR}.
 *
 * <pre>{@code
 * SandboxTools tools = SandboxTools.builder(manager).spec(spec).build();
 * tools.definitions();                                        // names, descriptions, JSON schemas
 * tools.execute("chat-42", "run_command", "{\"command\":\"ls\"}").text();
 * tools.instructions();                                       // for the system prompt
 * }</pre>
 *
 * <p>Immutable and thread-safe: calls for one conversation or many may run at once, on the callers' threads.
 */
public final class SandboxTools {
    private final ToolSettings settings;
    private final Toolbox toolbox;

    private SandboxTools(ToolSettings settings) {
        this.settings = settings;
        this.toolbox = new Toolbox(settings);
    }

    /**
     * Starts a tool set on a manager. The manager is not closed by the tool set.
     *
     * @param manager where the conversations' sandboxes live
     * @return a builder
     */
    public static Builder builder(SandboxManager manager) {
        return new Builder(manager);
    }

    /**
     * The tools this set offers, in {@link SandboxTool} order.
     *
     * @return their definitions
     */
    public List<ToolDefinition> definitions() {
        return toolbox.definitions();
    }

    /**
     * The definition of one offered tool.
     *
     * @param toolName for example {@code read_file}
     * @return its definition, or empty if this set does not offer it
     */
    public Optional<ToolDefinition> definition(String toolName) {
        return definitions().stream().filter(d -> d.name().equals(toolName)).findFirst();
    }

    /**
     * Runs one tool call, with its arguments as the model sent them: a JSON object.
     *
     * @param conversationId the conversation; mapped to a session by the resolver
     * @param toolName       the tool the model called
     * @param argumentsJson  the arguments; {@code null} or blank for none
     * @return the answer for the model; malformed JSON, unknown tools and invalid arguments are error results
     * @throws SandboxException for failures only an operator can fix (see the class description)
     */
    public ToolResult execute(Object conversationId, String toolName, String argumentsJson) {
        return toolbox.call(sessionId(conversationId), Objects.requireNonNull(toolName, "toolName"), argumentsJson);
    }

    /**
     * Runs one tool call whose arguments a framework has already parsed (MCP does).
     *
     * @param conversationId the conversation
     * @param toolName       the tool the model called
     * @param arguments      the arguments: strings, numbers and booleans by name; a {@code null} value is an
     *                       argument left out
     * @return the answer for the model
     * @throws SandboxException for failures only an operator can fix (see the class description)
     */
    public ToolResult execute(Object conversationId, String toolName, Map<String, ?> arguments) {
        // Not Map.copyOf: a JSON null (an optional argument left out) arrives as a null value.
        return toolbox.call(sessionId(conversationId), Objects.requireNonNull(toolName, "toolName"),
                Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(arguments, "arguments"))));
    }

    /**
     * The session that holds a conversation's sandbox.
     *
     * @param conversationId the conversation
     * @return its session id
     */
    public String sessionId(Object conversationId) {
        return settings.resolver().sessionId(Objects.requireNonNull(conversationId, "conversationId"));
    }

    /**
     * A conversation's sandbox, for the application: acquired (created, reused or resumed) with this set's
     * spec. Put input files in through {@link Sandbox#files()}, take results out the same way.
     *
     * @param conversationId the conversation
     * @return the sandbox
     * @throws SandboxException as {@link SandboxManager#acquire} does
     */
    public Sandbox sandbox(Object conversationId) {
        return settings.manager().acquire(sessionId(conversationId), settings.spec());
    }

    /**
     * Ends a conversation's use of its sandbox ({@link SandboxManager#release}): a persistent one stays until the
     * idle TTL and its workdir is kept; an ephemeral one is purged now. A conversation that never called a tool
     * is fine.
     *
     * @param conversationId the conversation
     * @throws SandboxException as {@link SandboxManager#release} does, except for a session that does not exist
     */
    public void release(Object conversationId) {
        try {
            settings.manager().release(sessionId(conversationId));
        } catch (SandboxNotFoundException e) {
            // never used, or already gone: nothing to release
        }
    }

    /**
     * Text for the model's system prompt: how the sandbox behaves (only {@value SandboxSpec#WORKSPACE}
     * persists, idle restarts, each command in a fresh shell, network and lifetime limits) and how to use
     * these tools.
     *
     * @return plain text, a few lines
     */
    public String instructions() {
        StringBuilder b = new StringBuilder(ModelInstructions.render(settings.spec(), settings.manager().idleTimeout()));
        b.append("- Tools: ").append(String.join(", ", definitions().stream().map(ToolDefinition::name).toList()))
                .append(". File tools take paths relative to ").append(SandboxSpec.WORKSPACE)
                .append(" and never follow symbolic links.\n");
        if (settings.readOnly()) {
            b.append("- The workspace is read-only for you: you can read, list and search files, but not change "
                    + "them or run commands.\n");
        }
        return b.toString();
    }

    /**
     * The manager the sandboxes live in.
     *
     * @return the manager
     */
    public SandboxManager manager() {
        return settings.manager();
    }

    /**
     * The spec every conversation's sandbox runs.
     *
     * @return the spec
     */
    public SandboxSpec spec() {
        return settings.spec();
    }

    /**
     * The same tool set (manager, tools, limits, conversation ids) whose conversations' sandboxes run another spec.
     * For example the MCP server runs a client's unkeyed conversation, which nobody can name again, with
     * {@code spec().toBuilder().managerScoped(true).build()}.
     *
     * @param other the spec
     * @return a new tool set; this one is unchanged
     */
    public SandboxTools withSpec(SandboxSpec other) {
        ToolSettings s = settings;
        return new SandboxTools(new ToolSettings(s.manager(), Objects.requireNonNull(other, "spec"), s.resolver(),
                s.tools(), s.readOnly(), s.outputLimit(), s.readLimit(), s.writeLimit(), s.defaultTimeout(),
                s.maxTimeout(), s.listLimit(), s.searchLimit()));
    }

    /**
     * Whether the set was built read-only (no {@code run_command}, {@code write_file} or {@code edit_file}).
     *
     * @return {@code true} if read-only
     */
    public boolean readOnly() {
        return settings.readOnly();
    }

    /**
     * Builds a {@link SandboxTools}. Each option may be set once; {@link #spec(SandboxSpec)} is required.
     */
    public static final class Builder {
        /** The defaults, written once in {@link SandboxConfig}. */
        private static final SandboxConfig DEFAULTS = new SandboxConfig();
        /** Default {@link #outputLimit(int)}: 20,000 bytes of each stream ({@code tools.output-limit}). */
        public static final int DEFAULT_OUTPUT_LIMIT = (int) DEFAULTS.getToolsOutputLimit();
        /** Default {@link #readLimit(int)}: 100,000 bytes per read ({@code tools.read-limit}). */
        public static final int DEFAULT_READ_LIMIT = (int) DEFAULTS.getToolsReadLimit();
        /** Default {@link #writeLimit(long)}: 10 MB per write or edit ({@code tools.write-limit}). */
        public static final long DEFAULT_WRITE_LIMIT = DEFAULTS.getToolsWriteLimit();
        /** Default {@link #defaultTimeout(Duration)}: 2 minutes ({@code tools.default-timeout}). */
        public static final Duration DEFAULT_TIMEOUT = DEFAULTS.getToolsDefaultTimeout();
        /** Default {@link #maxTimeout(Duration)}: 10 minutes ({@code tools.max-timeout}). */
        public static final Duration DEFAULT_MAX_TIMEOUT = DEFAULTS.getToolsMaxTimeout();
        /** Default {@link #listLimit(int)}: 500 entries ({@code tools.list-limit}). */
        public static final int DEFAULT_LIST_LIMIT = DEFAULTS.getToolsListLimit();
        /** Default {@link #searchLimit(int)}: 500 matches ({@code tools.search-limit}). */
        public static final int DEFAULT_SEARCH_LIMIT = DEFAULTS.getToolsSearchLimit();

        private final SandboxManager manager;
        private @Nullable SandboxSpec spec;
        private @Nullable SessionResolver resolver;
        private @Nullable Set<SandboxTool> tools;
        private boolean readOnly;
        private @Nullable Integer outputLimit;
        private @Nullable Integer readLimit;
        private @Nullable Long writeLimit;
        private @Nullable Duration defaultTimeout;
        private @Nullable Duration maxTimeout;
        private @Nullable Integer listLimit;
        private @Nullable Integer searchLimit;
        private @Nullable SandboxConfig config;

        private Builder(SandboxManager manager) {
            this.manager = Objects.requireNonNull(manager, "manager");
        }

        /**
         * Takes every option this builder has not been given from a configuration: its {@code tools.*} settings
         * ({@code tools.allowed}, {@code tools.read-only}, {@code tools.session-prefix}, the timeouts and limits) and,
         * if {@code spec.image} is set, its spec. An option set on the builder wins, whether before or after.
         *
         * @param settings the configuration; read when {@link #build()} runs
         * @return this builder
         * @throws IllegalStateException if this option was set already
         */
        public Builder config(SandboxConfig settings) {
            requireUnset(this.config == null, "config");
            this.config = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /**
         * The spec every conversation's sandbox is acquired with. Required (or {@code spec.image} in
         * {@link #config}).
         *
         * @param spec the spec
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder spec(SandboxSpec spec) {
            requireUnset(this.spec == null, "spec");
            this.spec = Objects.requireNonNull(spec, "spec");
            return this;
        }

        /**
         * How conversation ids become session ids. Default: {@link SessionResolver#prefixed(String)} with
         * {@code "conv-"}.
         *
         * @param resolver the resolver
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder resolver(SessionResolver resolver) {
            requireUnset(this.resolver == null, "resolver");
            this.resolver = Objects.requireNonNull(resolver, "resolver");
            return this;
        }

        /**
         * Offers only these tools (an allow-list). Default: all of them.
         *
         * @param allowed the tools to offer, at least one
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder tools(SandboxTool... allowed) {
            requireUnset(this.tools == null, "tools");
            if (allowed.length == 0) {
                throw new IllegalArgumentException("tools: give at least one tool");
            }
            this.tools = EnumSet.copyOf(Arrays.asList(allowed));
            return this;
        }

        /**
         * Offers only the tools that cannot change the workspace: {@code read_file}, {@code list_files} and
         * {@code search_files}. Combined with {@link #tools(SandboxTool...)}, the allow-list may name only those.
         *
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder readOnly() {
            requireUnset(!readOnly, "readOnly");
            this.readOnly = true;
            return this;
        }

        /**
         * How much of each output stream of {@code run_command} the model sees: half from the start, half from
         * the end, with a line saying how much was cut between. Default 20,000 ({@code tools.output-limit}).
         *
         * @param bytes at least 256
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder outputLimit(int bytes) {
            requireUnset(outputLimit == null, "outputLimit");
            this.outputLimit = atLeast(bytes, 256, "outputLimit");
            return this;
        }

        /**
         * The most one {@code read_file} call returns. Default 100,000 ({@code tools.read-limit}).
         *
         * @param bytes at least 256
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder readLimit(int bytes) {
            requireUnset(readLimit == null, "readLimit");
            this.readLimit = atLeast(bytes, 256, "readLimit");
            return this;
        }

        /**
         * The largest file {@code write_file} writes and {@code edit_file} edits. Default 10 MB. The manager's
         * {@linkplain SandboxManager.Builder#fileLimits(long, int) file limits} apply too.
         *
         * @param bytes at least 1
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder writeLimit(long bytes) {
            requireUnset(writeLimit == null, "writeLimit");
            if (bytes < 1) {
                throw new IllegalArgumentException("writeLimit must be at least 1, got " + bytes);
            }
            this.writeLimit = bytes;
            return this;
        }

        /**
         * The timeout of {@code run_command} when the model gives none. Default 2 minutes.
         *
         * @param timeout whole seconds, at least 1
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder defaultTimeout(Duration timeout) {
            requireUnset(defaultTimeout == null, "defaultTimeout");
            this.defaultTimeout = seconds(timeout, "defaultTimeout");
            return this;
        }

        /**
         * The longest timeout the model may ask {@code run_command} for; longer requests are capped (and the
         * model is told). Default 10 minutes.
         *
         * @param timeout whole seconds, at least 1
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder maxTimeout(Duration timeout) {
            requireUnset(maxTimeout == null, "maxTimeout");
            this.maxTimeout = seconds(timeout, "maxTimeout");
            return this;
        }

        /**
         * The most entries one {@code list_files} call shows. Default 500 ({@code tools.list-limit}).
         *
         * @param entries at least 1
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder listLimit(int entries) {
            requireUnset(listLimit == null, "listLimit");
            this.listLimit = atLeast(entries, 1, "listLimit");
            return this;
        }

        /**
         * The most matches one {@code search_files} call may return. Default 500 ({@code tools.search-limit}).
         *
         * @param matches at least 1
         * @return this builder

         * @throws IllegalStateException if this option was set already
         */
        public Builder searchLimit(int matches) {
            requireUnset(searchLimit == null, "searchLimit");
            this.searchLimit = atLeast(matches, 1, "searchLimit");
            return this;
        }

        /**
         * Builds the tool set.
         *
         * @return the immutable tool set
         * @throws SandboxConfigurationException if no spec was set, a read-only set's allow-list names a tool
         *                                       that changes the workspace, or the default timeout exceeds the
         *                                       maximum
         */
        public SandboxTools build() {
            if (config != null) {
                applyConfig(config);
            }
            if (spec == null) {
                throw new SandboxConfigurationException("SandboxTools: spec(...) is required");
            }
            Set<SandboxTool> offered = tools == null ? EnumSet.allOf(SandboxTool.class) : EnumSet.copyOf(tools);
            if (readOnly) {
                if (tools != null) {
                    for (SandboxTool t : tools) {
                        if (t.changesWorkspace()) {
                            throw new SandboxConfigurationException("SandboxTools: a read-only tool set cannot offer "
                                    + t.toolName());
                        }
                    }
                }
                offered.removeIf(SandboxTool::changesWorkspace);
            }
            Duration max = maxTimeout == null ? DEFAULT_MAX_TIMEOUT : maxTimeout;
            Duration dflt = defaultTimeout == null ? (DEFAULT_TIMEOUT.compareTo(max) <= 0 ? DEFAULT_TIMEOUT : max)
                    : defaultTimeout;
            if (dflt.compareTo(max) > 0) {
                throw new SandboxConfigurationException("SandboxTools: defaultTimeout " + dflt + " exceeds maxTimeout " + max);
            }
            return new SandboxTools(new ToolSettings(manager, spec,
                    resolver == null ? SessionResolver.prefixed("conv-") : resolver, offered, readOnly,
                    outputLimit == null ? DEFAULT_OUTPUT_LIMIT : outputLimit,
                    readLimit == null ? DEFAULT_READ_LIMIT : readLimit,
                    writeLimit == null ? DEFAULT_WRITE_LIMIT : writeLimit, dflt, max,
                    listLimit == null ? DEFAULT_LIST_LIMIT : listLimit,
                    searchLimit == null ? DEFAULT_SEARCH_LIMIT : searchLimit));
        }

        /**
         * Options not set on the builder, from the configuration, through the builder's own checks; a failure names
         * the key it came from.
         */
        private void applyConfig(SandboxConfig c) {
            String prefix = SandboxConfig.PREFIX + "tools.";
            if (spec == null && c.getImage() != null) {
                spec = c.spec();
            }
            if (resolver == null) {
                String sessionPrefix = c.getToolsSessionPrefix();
                resolver = fromKey(prefix + "session-prefix", () -> SessionResolver.prefixed(sessionPrefix));
            }
            if (tools == null && !c.getToolsAllowed().isEmpty()) {
                List<SandboxTool> allowed = new ArrayList<>();
                for (String name : c.getToolsAllowed()) {
                    SandboxTool tool = SandboxTool.byName(name).orElseThrow(() -> new SandboxConfigurationException(
                            prefix + "allowed: no tool named '" + name + "'; the tools are " + Arrays.stream(
                            SandboxTool.values()).map(SandboxTool::toolName).collect(java.util.stream.Collectors.joining(", "))));
                    if (tool.changesWorkspace() && (readOnly || c.isToolsReadOnly())) {
                        throw new SandboxConfigurationException(prefix + "allowed: " + name + " changes the workspace, "
                                + "which a read-only tool set (" + prefix + "read-only=true) cannot offer");
                    }
                    allowed.add(tool);
                }
                tools = EnumSet.copyOf(allowed);
            }
            if (!readOnly && c.isToolsReadOnly()) {
                readOnly = true;
            }
            if (outputLimit == null) {
                fromKey(prefix + "output-limit", () -> outputLimit(Math.toIntExact(c.getToolsOutputLimit())));
            }
            if (readLimit == null) {
                fromKey(prefix + "read-limit", () -> readLimit(Math.toIntExact(c.getToolsReadLimit())));
            }
            if (writeLimit == null) {
                fromKey(prefix + "write-limit", () -> writeLimit(c.getToolsWriteLimit()));
            }
            boolean maxFromConfig = maxTimeout == null;
            if (maxFromConfig) {
                fromKey(prefix + "max-timeout", () -> maxTimeout(c.getToolsMaxTimeout()));
            }
            if (defaultTimeout == null && !c.getToolsDefaultTimeout().equals(DEFAULT_TIMEOUT)) {
                Duration dflt = c.getToolsDefaultTimeout();
                Duration max = Objects.requireNonNull(maxTimeout, "maxTimeout");
                fromKey(prefix + "default-timeout", () -> defaultTimeout(dflt));
                if (dflt.compareTo(max) > 0) {
                    throw new SandboxConfigurationException(prefix + "default-timeout: " + ConfigValues.format(dflt)
                            + " exceeds " + (maxFromConfig ? prefix + "max-timeout" : "maxTimeout") + " ("
                            + ConfigValues.format(max) + ")");
                }
            } // left unset, it is clamped to the maximum
            if (listLimit == null) {
                fromKey(prefix + "list-limit", () -> listLimit(c.getToolsListLimit()));
            }
            if (searchLimit == null) {
                fromKey(prefix + "search-limit", () -> searchLimit(c.getToolsSearchLimit()));
            }
        }

        /** Runs one builder call for a key; the builder's complaint names the key. */
        private static <T> T fromKey(String key, java.util.function.Supplier<T> call) {
            try {
                return call.get();
            } catch (IllegalArgumentException | ArithmeticException e) {
                throw new SandboxConfigurationException(key + ": " + e.getMessage(), e);
            }
        }

        private static void requireUnset(boolean unset, String option) {
            if (!unset) {
                throw new IllegalStateException(option + " was already set");
            }
        }

        private static int atLeast(int value, int min, String name) {
            if (value < min) {
                throw new IllegalArgumentException(name + " must be at least " + min + ", got " + value);
            }
            return value;
        }

        private static Duration seconds(Duration d, String name) {
            Objects.requireNonNull(d, name);
            if (d.toSeconds() < 1 || d.toNanosPart() != 0) {
                throw new IllegalArgumentException(name + " must be whole seconds, at least 1, got " + d);
            }
            return d;
        }
    }
}
