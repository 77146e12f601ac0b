package dev.sandboxkit.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a field that {@link SandboxExtension} fills before each test (instance fields) or before all
 * tests of the class (static fields). Supported types: {@link dev.sandboxkit.SandboxManager},
 * {@link dev.sandboxkit.Sandbox} and {@link dev.sandboxkit.SandboxSpec}; the values are the same as the
 * parameters of that type would get.
 *
 * <pre>{@code
 * @SandboxTest
 * class WorkspaceTest {
 *     @InjectSandbox
 *     Sandbox sandbox;
 * }
 * }</pre>
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface InjectSandbox {
}
