package dev.sandboxkit.spring.boot;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.nio.file.Path;

/**
 * The starter's own {@code sandboxkit.*} options: which beans it creates and where the session store lives. They are
 * not settings of the library. Every other {@code sandboxkit.*} property (the manager's, the default spec's, the warm
 * pool's, the tools', the drivers') is a key of {@link dev.sandboxkit.SandboxConfig}, bound onto the
 * {@code SandboxConfig} bean with the library's defaults and syntax ({@code 30s}, {@code 512MB}; a plain number is
 * seconds or bytes); see {@link dev.sandboxkit.SandboxConfig#keys()}.
 */
@ConfigurationProperties("sandboxkit")
public class SandboxProperties {

    /** Whether to configure sandboxkit at all. */
    private boolean enabled = true;

    /**
     * Whether startup fails when the sandbox backend cannot be reached. When false, the application starts, the
     * health indicator reports DOWN, and the manager starts on first use.
     */
    private boolean failFast = true;

    /** Where session metadata lives: memory (lost on restart), h2 or sqlite (a file), or jdbc (the DataSource). */
    private StoreType store = StoreType.MEMORY;

    /** The database file of the h2 and sqlite stores. */
    private Path storeFile;

    /** Whether the jdbc store creates and migrates its tables at startup (otherwise it only checks them). */
    private boolean storeAutoMigrate = true;

    private final Tools tools = new Tools();

    private final ChatClientSettings chatClient = new ChatClientSettings();

    /** Creates the options with their defaults; Spring binds them. */
    public SandboxProperties() {
    }

    /** Where the session store lives. */
    public enum StoreType {
        /** In the manager's memory: sessions are forgotten on restart. */
        MEMORY,
        /** An H2 file ({@code sandboxkit.store-file}), for one host. Needs sandbox-store-jdbc and H2. */
        H2,
        /** A SQLite file ({@code sandboxkit.store-file}), for one host. Needs sandbox-store-jdbc and sqlite-jdbc. */
        SQLITE,
        /** The application's DataSource (PostgreSQL, H2 or SQLite), shared by managers. Needs sandbox-store-jdbc. */
        JDBC
    }

    /**
     * Whether sandboxkit is configured.
     *
     * @return {@code sandboxkit.enabled}
     */
    public boolean isEnabled() {
        return enabled;
    }

    /**
     * Sets {@code sandboxkit.enabled}.
     *
     * @param enabled whether sandboxkit is configured
     */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * Whether an unreachable backend fails the startup.
     *
     * @return {@code sandboxkit.fail-fast}
     */
    public boolean isFailFast() {
        return failFast;
    }

    /**
     * Sets {@code sandboxkit.fail-fast}.
     *
     * @param failFast whether an unreachable backend fails the startup
     */
    public void setFailFast(boolean failFast) {
        this.failFast = failFast;
    }

    /**
     * The session store.
     *
     * @return {@code sandboxkit.store}
     */
    public StoreType getStore() {
        return store;
    }

    /**
     * Sets {@code sandboxkit.store}.
     *
     * @param store where session metadata lives
     */
    public void setStore(StoreType store) {
        this.store = store;
    }

    /**
     * The database file of the h2 and sqlite stores.
     *
     * @return {@code sandboxkit.store-file}
     */
    public Path getStoreFile() {
        return storeFile;
    }

    /**
     * Sets {@code sandboxkit.store-file}.
     *
     * @param storeFile the database file
     */
    public void setStoreFile(Path storeFile) {
        this.storeFile = storeFile;
    }

    /**
     * Whether the jdbc store migrates its schema.
     *
     * @return {@code sandboxkit.store-auto-migrate}
     */
    public boolean isStoreAutoMigrate() {
        return storeAutoMigrate;
    }

    /**
     * Sets {@code sandboxkit.store-auto-migrate}.
     *
     * @param storeAutoMigrate whether to migrate
     */
    public void setStoreAutoMigrate(boolean storeAutoMigrate) {
        this.storeAutoMigrate = storeAutoMigrate;
    }

    /**
     * The starter's tool beans.
     *
     * @return {@code sandboxkit.tools}
     */
    public Tools getTools() {
        return tools;
    }

    /**
     * What the starter adds to Spring AI's auto-configured ChatClient.Builder.
     *
     * @return {@code sandboxkit.chat-client}
     */
    public ChatClientSettings getChatClient() {
        return chatClient;
    }

    /**
     * The starter's options of the tool beans ({@code sandboxkit.tools.enabled}, {@code .rethrow-sandbox-exceptions});
     * what the tools do ({@code sandboxkit.tools.read-only}, limits, timeouts) are keys of
     * {@link dev.sandboxkit.SandboxConfig}.
     */
    public static class Tools {
        /** Whether to create the tool beans (SandboxTools, the tool callback provider and the @Tool methods). */
        private boolean enabled = true;

        /**
         * Whether the application's ToolExecutionExceptionProcessor beans are decorated so that sandboxkit's
         * operator failures thrown by @Tool methods reach the caller instead of the model.
         */
        private boolean rethrowSandboxExceptions = true;

        /** Creates the options with their defaults. */
        public Tools() {
        }

        /**
         * Whether the tool beans are created.
         *
         * @return {@code sandboxkit.tools.enabled}
         */
        public boolean isEnabled() {
            return enabled;
        }

        /**
         * Sets {@code sandboxkit.tools.enabled}.
         *
         * @param enabled whether the tool beans are created
         */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /**
         * Whether exception processors are decorated.
         *
         * @return {@code sandboxkit.tools.rethrow-sandbox-exceptions}
         */
        public boolean isRethrowSandboxExceptions() {
            return rethrowSandboxExceptions;
        }

        /**
         * Sets {@code sandboxkit.tools.rethrow-sandbox-exceptions}.
         *
         * @param rethrowSandboxExceptions whether exception processors are decorated
         */
        public void setRethrowSandboxExceptions(boolean rethrowSandboxExceptions) {
            this.rethrowSandboxExceptions = rethrowSandboxExceptions;
        }
    }

    /** What the starter adds to Spring AI's auto-configured {@code ChatClient.Builder} ({@code sandboxkit.chat-client.*}). */
    public static class ChatClientSettings {
        /**
         * Whether to add the SandboxConversationAdvisor, which hands the chat_memory_conversation_id advisor
         * parameter to the tools.
         */
        private boolean conversationAdvisor = true;

        /**
         * Whether to offer the sandbox tools to every ChatClient built from the auto-configured builder. Off by
         * default: a ChatClient that should not run commands never sees them.
         */
        private boolean defaultTools = false;

        /** Creates the options with their defaults. */
        public ChatClientSettings() {
        }

        /**
         * Whether the conversation advisor is added.
         *
         * @return {@code sandboxkit.chat-client.conversation-advisor}
         */
        public boolean isConversationAdvisor() {
            return conversationAdvisor;
        }

        /**
         * Sets {@code sandboxkit.chat-client.conversation-advisor}.
         *
         * @param conversationAdvisor whether the advisor is added
         */
        public void setConversationAdvisor(boolean conversationAdvisor) {
            this.conversationAdvisor = conversationAdvisor;
        }

        /**
         * Whether the tools are default tools.
         *
         * @return {@code sandboxkit.chat-client.default-tools}
         */
        public boolean isDefaultTools() {
            return defaultTools;
        }

        /**
         * Sets {@code sandboxkit.chat-client.default-tools}.
         *
         * @param defaultTools whether every ChatClient gets the tools
         */
        public void setDefaultTools(boolean defaultTools) {
            this.defaultTools = defaultTools;
        }
    }
}
