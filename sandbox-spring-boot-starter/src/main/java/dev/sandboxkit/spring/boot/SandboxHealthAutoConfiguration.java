package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.spring.boot.internal.SandboxBackend;
import dev.sandboxkit.spring.boot.internal.SandboxHealthIndicator;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code sandboxkit} health indicator, when Spring Boot's health support is on the classpath: UP while the
 * engine answers a ping, DOWN with the error otherwise (also while a {@code sandboxkit.fail-fast=false} manager
 * waits for it), with the manager's active, suspended and pooled counts. Off with
 * {@code management.health.sandboxkit.enabled=false}.
 */
@AutoConfiguration(after = SandboxAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "sandboxkit.enabled", matchIfMissing = true)
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnBean(SandboxManager.class)
@ConditionalOnEnabledHealthIndicator("sandboxkit")
public class SandboxHealthAutoConfiguration {

    /** Created by Spring. */
    public SandboxHealthAutoConfiguration() {
    }

    /**
     * The health indicator.
     *
     * @param manager the manager
     * @param backend the starter's driver, absent when the application built its own manager
     * @return the indicator
     */
    @Bean
    @ConditionalOnMissingBean(name = "sandboxkitHealthIndicator")
    public HealthIndicator sandboxkitHealthIndicator(SandboxManager manager, ObjectProvider<SandboxBackend> backend) {
        return new SandboxHealthIndicator(manager, backend.getIfUnique());
    }
}
