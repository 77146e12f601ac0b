/**
 * Spring Boot auto-configuration for sandboxkit: {@link dev.sandboxkit.spring.boot.SandboxProperties} (the
 * {@code sandboxkit.*} properties), {@link dev.sandboxkit.spring.boot.SandboxAutoConfiguration} (manager, driver,
 * session store, default spec), {@link dev.sandboxkit.spring.boot.SandboxToolsAutoConfiguration} (model tools and
 * the Spring AI beans), {@link dev.sandboxkit.spring.boot.SandboxMetricsAutoConfiguration},
 * {@link dev.sandboxkit.spring.boot.SandboxHealthAutoConfiguration} and
 * {@link dev.sandboxkit.spring.boot.SandboxInfoAutoConfiguration}.
 */
package dev.sandboxkit.spring.boot;
