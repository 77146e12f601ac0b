package dev.sandboxkit.spring.boot;

import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.spring.boot.internal.SandboxInfoContributor;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code sandboxkit} entry of {@code /actuator/info}, when Spring Boot Actuator is on the classpath: driver,
 * instance id, active containers, suspended sessions, pooled sandboxes and lifetime totals. Off with
 * {@code management.info.sandboxkit.enabled=false}.
 */
@AutoConfiguration(after = SandboxAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = {"sandboxkit.enabled", "management.info.sandboxkit.enabled"}, matchIfMissing = true)
@ConditionalOnClass(InfoContributor.class)
@ConditionalOnBean(SandboxManager.class)
public class SandboxInfoAutoConfiguration {

    /** Created by Spring. */
    public SandboxInfoAutoConfiguration() {
    }

    /**
     * The info contributor.
     *
     * @param manager the manager
     * @return the contributor
     */
    @Bean
    @ConditionalOnMissingBean(name = "sandboxkitInfoContributor")
    public InfoContributor sandboxkitInfoContributor(SandboxManager manager) {
        return new SandboxInfoContributor(manager);
    }
}
