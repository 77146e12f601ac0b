package dev.sandboxkit.testkit;

import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a test class (or one test method) against real sandboxes: registers {@link SandboxExtension},
 * which builds a {@link dev.sandboxkit.SandboxManager}, injects it and fresh sandboxes, and destroys
 * every session a test created when the test ends.
 *
 * <pre>{@code
 * @SandboxTest
 * class ShellToolTest {
 *     @Test
 *     void runsCommands(Sandbox sandbox) {
 *         assertThat(sandbox.exec("echo", "hi").stdout()).isEqualTo("hi\n");
 *     }
 * }
 * }</pre>
 *
 * <p>Each attribute left empty is filled from a system property, then from a default: the explicit
 * attribute wins, so a test that names its image keeps it, while a suite that leaves it empty can be
 * pointed elsewhere from the command line ({@code -Dsandboxkit.driver=kubernetes}).
 *
 * <p>A backend that cannot be reached fails the tests with a message that says how to fix it. It is
 * skipped instead only when {@link #skipIfUnavailable()} is set and the build is not on CI.
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(SandboxExtension.class)
public @interface SandboxTest {

    /**
     * The driver name, for example {@code docker}. Empty: the system property {@code sandboxkit.driver},
     * else the available driver with the highest priority.
     *
     * @return driver name, or empty
     */
    String driver() default "";

    /**
     * The image injected sandboxes run. Empty: the system property {@code sandboxkit.test.image}, else a
     * tiny BusyBox image built locally by {@link TestImages#busybox()} (Docker driver only).
     *
     * @return image reference, or empty
     */
    String image() default "";

    /**
     * The manager's idle TTL as an ISO-8601 duration, for example {@code PT2S}. Empty: the system property
     * {@code sandboxkit.idleTimeout}, else the manager's default (30 minutes).
     *
     * @return duration, or empty
     */
    String idleTimeout() default "";

    /**
     * Skip (instead of fail) when the backend cannot be reached, for developer machines without Docker.
     * Ignored on CI (environment variable {@code CI=true}, or system property {@code sandboxkit.ci=true}):
     * there a missing backend always fails, so that a broken CI can never pass by skipping everything.
     *
     * @return whether an unavailable backend skips the tests
     */
    boolean skipIfUnavailable() default false;
}
