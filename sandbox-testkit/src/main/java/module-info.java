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
    // TestImages (building local images) uses docker-java; the Docker driver no longer requires it, so this module
    // does. docker-java has no module descriptor: these are its Automatic-Module-Names. As automatic modules its
    // jars read every module in the graph but bring none in: the explicit modules docker-java-core uses at run time
    // are required here so that they are resolved.
    requires com.github.dockerjava.api;
    requires com.github.dockerjava.core;
    requires com.github.dockerjava.transport;
    requires com.github.dockerjava.transport.zerodep;
    requires com.google.common;
    requires org.apache.commons.compress;
    requires org.apache.commons.io;
    requires org.apache.commons.lang3;
    requires com.fasterxml.jackson.databind;

    exports dev.sandboxkit.testkit;
    exports dev.sandboxkit.testkit.tck;
    opens dev.sandboxkit.testkit;
    opens dev.sandboxkit.testkit.tck;

    provides dev.sandboxkit.spi.SandboxDriverProvider with dev.sandboxkit.testkit.FakeDriverProvider;
}
