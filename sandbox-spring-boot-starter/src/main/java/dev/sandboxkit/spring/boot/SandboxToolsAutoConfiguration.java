package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spring.ai.SandboxConversationAdvisor;
import dev.sandboxkit.spring.ai.SandboxToolCallbackProvider;
import dev.sandboxkit.spring.ai.SandboxToolMethods;
import dev.sandboxkit.spring.boot.internal.ExceptionProcessorDecorator;
import dev.sandboxkit.spring.boot.internal.SandboxFactory;
import dev.sandboxkit.tools.SandboxTools;
import dev.sandboxkit.tools.SessionResolver;
import org.springframework.ai.chat.client.ChatClientBuilderCustomizer;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.ai.tool.execution.ToolExecutionExceptionProcessor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The model tools on the manager and the default spec: {@link SandboxTools} from {@code sandboxkit.tools.*}, and
 * for Spring AI the {@link SandboxToolCallbackProvider}, the {@link SandboxToolMethods} ({@code @Tool} style), a
 * customizer of the auto-configured {@code ChatClient.Builder} (the conversation advisor; the tools too with
 * {@code sandboxkit.chat-client.default-tools=true}), and the decoration of the
 * {@code ToolExecutionExceptionProcessor} beans. Needs a {@link SandboxSpec} bean: set {@code sandboxkit.spec.image}.
 *
 * <p>The tool callback provider is not offered to models by itself: pass it with
 * {@code chatClient.prompt().tools(provider)} or {@code builder.defaultTools(provider)}.
 */
@AutoConfiguration(after = SandboxAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = {"sandboxkit.enabled", "sandboxkit.tools.enabled"}, matchIfMissing = true)
@ConditionalOnBean({SandboxManager.class, SandboxSpec.class})
@EnableConfigurationProperties(SandboxProperties.class)
public class SandboxToolsAutoConfiguration {

    /** Created by Spring. */
    public SandboxToolsAutoConfiguration() {
    }

    /**
     * The tool set.
     *
     * @param config     the configuration
     * @param manager    the manager
     * @param spec       the default spec
     * @param resolver   the application's conversation-to-session mapping, if it defines one
     * @return the tool set
     */
    @Bean
    @ConditionalOnMissingBean
    public SandboxTools sandboxTools(SandboxConfig config, SandboxManager manager, SandboxSpec spec,
                                     ObjectProvider<SessionResolver> resolver) {
        return SandboxFactory.tools(config, manager, spec, resolver.getIfUnique());
    }

    /** The Spring AI beans. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ToolCallbackProvider.class)
    static class SpringAiConfiguration {

        @Bean
        @ConditionalOnMissingBean
        SandboxToolCallbackProvider sandboxToolCallbackProvider(SandboxTools tools, SandboxConfig config) {
            SandboxToolCallbackProvider.Builder b = SandboxToolCallbackProvider.builder(tools);
            String conversation = config.getToolsDefaultConversation();
            if (conversation != null) {
                b.defaultConversation(conversation);
            }
            return b.build();
        }

        @Bean
        @ConditionalOnMissingBean
        SandboxToolMethods sandboxToolMethods(SandboxToolCallbackProvider provider) {
            return new SandboxToolMethods(provider);
        }

        @Bean
        @ConditionalOnMissingBean(name = "sandboxkitChatClientCustomizer")
        ChatClientBuilderCustomizer sandboxkitChatClientCustomizer(SandboxProperties properties,
                                                                   SandboxToolCallbackProvider provider) {
            SandboxProperties.ChatClientSettings settings = properties.getChatClient();
            return builder -> {
                if (settings.isConversationAdvisor()) {
                    builder.defaultAdvisors(new SandboxConversationAdvisor());
                }
                if (settings.isDefaultTools()) {
                    builder.defaultTools(provider);
                }
            };
        }

        @Bean
        @ConditionalOnClass(ToolExecutionExceptionProcessor.class)
        @ConditionalOnBooleanProperty(name = "sandboxkit.tools.rethrow-sandbox-exceptions", matchIfMissing = true)
        static ExceptionProcessorDecorator sandboxkitExceptionProcessorDecorator() {
            return new ExceptionProcessorDecorator();
        }
    }
}
