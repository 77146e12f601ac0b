package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxListener;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.ArchiveStore;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spring.boot.SandboxProperties.StoreType;
import dev.sandboxkit.spring.boot.internal.JdbcStores;
import dev.sandboxkit.spring.boot.internal.SandboxBackend;
import dev.sandboxkit.spring.boot.internal.SandboxConfigBinder;
import dev.sandboxkit.spring.boot.internal.SandboxFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.core.type.AnnotatedTypeMetadata;
import org.springframework.util.ClassUtils;

import javax.sql.DataSource;

/**
 * The sandbox manager from {@code sandboxkit.*}: the {@link SandboxConfig} the properties describe, its driver, its session store (in memory, an H2 or SQLite file, or
 * the application's DataSource), the default {@link SandboxSpec} when {@code sandboxkit.spec.image} is set, and a
 * warm pool for it. Every bean backs off when the application defines its own; a {@link SandboxDriver},
 * {@link SessionStore} or {@link SandboxListener} bean of the application's is used by the manager. The manager is
 * closed with the context: its containers are removed, persistent workdirs kept.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnBooleanProperty(name = "sandboxkit.enabled", matchIfMissing = true)
@EnableConfigurationProperties(SandboxProperties.class)
public class SandboxAutoConfiguration {

    /** Created by Spring. */
    public SandboxAutoConfiguration() {
    }

    /**
     * Every {@code sandboxkit.*} property that is a key of the library ({@link SandboxConfig#keys()}), bound onto
     * the library's configuration: its defaults where a property is absent, its syntax and its checks. An unknown
     * {@code sandboxkit.*} property fails the startup, naming the nearest key.
     *
     * @param environment    the application's environment
     * @param resourceLoader resolves {@code sandboxkit.spec.extra-ca-certificates} given as a resource
     * @return the configuration
     */
    @Bean
    @ConditionalOnMissingBean
    public SandboxConfig sandboxConfig(Environment environment, ResourceLoader resourceLoader) {
        return SandboxConfigBinder.bind(environment, resourceLoader);
    }

    /**
     * The default spec, from {@code sandboxkit.spec.*}; only when an image is set.
     *
     * @param config the configuration
     * @return the spec
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "sandboxkit.spec", name = "image")
    public SandboxSpec sandboxSpec(SandboxConfig config) {
        return config.spec();
    }

    /**
     * The driver the manager runs on, kept for the health indicator; closed after the manager.
     *
     * @param config         the configuration
     * @param properties     the starter's own options
     * @param environment    the application's environment (for the names of driver settings in messages)
     * @param driver         the application's driver, if it defines one
     * @param resourceLoader the application's class loader, where driver modules are found
     * @return the backend
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(SandboxManager.class)
    public SandboxBackend sandboxBackend(SandboxConfig config, SandboxProperties properties, Environment environment,
                                         ObjectProvider<SandboxDriver> driver, ResourceLoader resourceLoader) {
        return SandboxBackend.create(config, SandboxConfigBinder.legacyDriverSettings(environment).keySet(),
                properties.isFailFast(), driver.getIfUnique(), resourceLoader.getClassLoader());
    }

    /**
     * The manager, started (or, with {@code sandboxkit.fail-fast=false} and the engine down, starting on first
     * use); closed with the context.
     *
     * @param config     the configuration
     * @param properties the starter's own options
     * @param backend    the driver
     * @param store      the session store, if any
     * @param spec       the default spec, if any (for the warm pool)
     * @param listeners  lifecycle listeners (metrics among them)
     * @param archive    the application's archive store, if any: the archive tier, with {@code sandboxkit.archive-after}
     * @param resourceLoader the application's class loader
     * @return the manager
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public SandboxManager sandboxManager(SandboxConfig config, SandboxProperties properties, SandboxBackend backend,
                                         ObjectProvider<SessionStore> store, ObjectProvider<SandboxSpec> spec,
                                         ObjectProvider<SandboxListener> listeners, ObjectProvider<ArchiveStore> archive,
                                         ResourceLoader resourceLoader) {
        SessionStore sessions = store.getIfUnique();
        if (sessions == null && properties.getStore() != StoreType.MEMORY
                && !ClassUtils.isPresent("dev.sandboxkit.store.jdbc.JdbcSessionStore",
                resourceLoader.getClassLoader())) {
            throw new dev.sandboxkit.SandboxConfigurationException("Invalid property sandboxkit.store: "
                    + properties.getStore().name().toLowerCase() + " needs dev.sandboxkit:sandbox-store-jdbc on the "
                    + "classpath (and the database's JDBC driver)");
        }
        return SandboxFactory.manager(config, properties.isFailFast(), backend, sessions, spec.getIfUnique(),
                listeners.orderedStream().toList(), archive.getIfUnique());
    }

    /** The JDBC session stores, when sandbox-store-jdbc is on the classpath and {@code sandboxkit.store} asks for one. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sandboxkit.store.jdbc.JdbcSessionStore")
    static class JdbcStoreConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(SessionStore.class)
        @Conditional(OnJdbcStore.class)
        SessionStore sandboxSessionStore(SandboxProperties properties, ObjectProvider<DataSource> dataSource) {
            return JdbcStores.create(properties, properties.getStore() == StoreType.JDBC ? dataSource.getIfUnique() : null);
        }
    }

    /** Matches when {@code sandboxkit.store} is h2, sqlite or jdbc. */
    static final class OnJdbcStore extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            StoreType type = Binder.get(context.getEnvironment()).bind("sandboxkit.store", StoreType.class)
                    .orElse(StoreType.MEMORY);
            return type == StoreType.MEMORY ? ConditionOutcome.noMatch("sandboxkit.store is memory")
                    : ConditionOutcome.match("sandboxkit.store is " + type);
        }
    }
}
