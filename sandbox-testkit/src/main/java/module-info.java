/**
 * Testing support for sandboxkit: the fake driver, the manual clock and scheduler, the JUnit 5 extension
 * ({@link dev.sandboxkit.testkit}) and the conformance kits ({@link dev.sandboxkit.testkit.tck}).
 *
 * <p>Both packages are open as well as exported: JUnit runs the kits' test methods and creates the extension by
 * reflection, from the class path or the module path. A test class that uses {@code @SandboxTest} field injection
 * opens its own package to this module.
 */
module dev.sandboxkit.testkit {
    requires transitive dev.sandboxkit;
    requires transitive org.junit.jupiter.api;
    requires org.assertj.core;
    requires org.slf4j;
    // Optional, as in the pom: only TestImages (building local images) uses docker-java.
    requires static com.github.dockerjava.api;
    requires static com.github.dockerjava.core;
    requires static com.github.dockerjava.transport.zerodep;

    exports dev.sandboxkit.testkit;
    exports dev.sandboxkit.testkit.tck;
    opens dev.sandboxkit.testkit;
    opens dev.sandboxkit.testkit.tck;

    provides dev.sandboxkit.spi.SandboxDriverProvider with dev.sandboxkit.testkit.FakeDriverProvider;
}
