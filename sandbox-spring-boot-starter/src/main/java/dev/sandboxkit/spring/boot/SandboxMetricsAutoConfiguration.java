package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.micrometer.SandboxMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Sandbox lifecycle metrics ({@code sandboxkit.events}, {@code sandboxkit.start}, {@code sandboxkit.exec},
 * {@code sandboxkit.phase} and the gauges of {@link SandboxMetrics}) when the application has a
 * {@link MeterRegistry}: the {@link SandboxMetrics} bean is the manager's listener and a {@code MeterBinder}, which
 * Boot binds to its registries; its gauges read the manager once the singletons exist.
 */
@AutoConfiguration(before = SandboxAutoConfiguration.class, afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnBooleanProperty(name = "sandboxkit.enabled", matchIfMissing = true)
@ConditionalOnClass({MeterRegistry.class, SandboxMetrics.class})
@ConditionalOnBean(MeterRegistry.class)
public class SandboxMetricsAutoConfiguration {

    /** Created by Spring. */
    public SandboxMetricsAutoConfiguration() {
    }

    /**
     * The meters: a lifecycle listener for the manager, and a {@code MeterBinder} that Boot binds to every registry.
     *
     * @return the listener
     */
    @Bean
    @ConditionalOnMissingBean
    public SandboxMetrics sandboxMetrics() {
        return new SandboxMetrics();
    }

    /**
     * Once every singleton exists: points the gauges at the manager, and binds the meters to the application's
     * registry, which Boot's own metrics set-up does too when it is present (binding twice changes nothing).
     *
     * @param metrics    the meters
     * @param manager    the manager, if there is exactly one
     * @param registries the registries; the primary one (Boot's composite) or the only one is bound
     * @return the binder
     */
    @Bean
    public SmartInitializingSingleton sandboxMetricsBinding(SandboxMetrics metrics, ObjectProvider<SandboxManager> manager,
                                                            ObjectProvider<MeterRegistry> registries) {
        return () -> {
            manager.ifUnique(metrics::monitor);
            registries.ifUnique(metrics::bindTo);
        };
    }
}
