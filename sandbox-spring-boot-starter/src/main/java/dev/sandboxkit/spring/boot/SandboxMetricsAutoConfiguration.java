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
 * {@link MeterRegistry}: the {@link SandboxMetrics} bean is the manager's listener, and its gauges are bound to the
 * manager once the singletons exist.
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
     * The meters, as a lifecycle listener.
     *
     * @param registry where the meters are registered
     * @return the listener
     */
    @Bean
    @ConditionalOnMissingBean
    public SandboxMetrics sandboxMetrics(MeterRegistry registry) {
        return new SandboxMetrics(registry);
    }

    /**
     * Binds the gauges to the manager, once every singleton exists.
     *
     * @param metrics the meters
     * @param manager the manager, if there is exactly one
     * @return the binder
     */
    @Bean
    public SmartInitializingSingleton sandboxMetricsGauges(SandboxMetrics metrics, ObjectProvider<SandboxManager> manager) {
        return () -> manager.ifUnique(metrics::bindGauges);
    }
}
