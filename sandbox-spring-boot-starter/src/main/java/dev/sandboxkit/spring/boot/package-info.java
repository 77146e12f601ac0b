/**
 * Spring Boot auto-configuration for sandboxkit: the {@code sandboxkit.*} properties (every key of
 * {@link dev.sandboxkit.SandboxConfig}, bound onto a {@code SandboxConfig} bean, and the starter's own options in
 * {@link dev.sandboxkit.spring.boot.SandboxProperties}), {@link dev.sandboxkit.spring.boot.SandboxAutoConfiguration} (manager, driver,
 * session store, default spec), {@link dev.sandboxkit.spring.boot.SandboxToolsAutoConfiguration} (model tools and
 * the Spring AI beans), {@link dev.sandboxkit.spring.boot.SandboxMetricsAutoConfiguration},
 * {@link dev.sandboxkit.spring.boot.SandboxHealthAutoConfiguration} and
 * {@link dev.sandboxkit.spring.boot.SandboxInfoAutoConfiguration}.
 */
package dev.sandboxkit.spring.boot;
