package dev.sandboxkit.testkit;

import dev.sandboxkit.spi.SandboxDriver;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ForwardingSandboxDriver} forwards every driver method. One it misses falls back to the SPI's default
 * ("unsupported"), and every test that wraps a real driver silently loses that feature: the gVisor kit once lost
 * workdir archives that way. A method added to {@link SandboxDriver} must be forwarded, or this fails.
 */
class ForwardingSandboxDriverTest {

    @Test
    void everyDriverMethodIsForwarded() throws NoSuchMethodException {
        List<String> missing = new ArrayList<>();
        for (Method m : SandboxDriver.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            Method own = ForwardingSandboxDriver.class.getMethod(m.getName(), m.getParameterTypes());
            if (own.getDeclaringClass() != ForwardingSandboxDriver.class) {
                missing.add(m.toString());
            }
        }
        assertThat(missing).as("SandboxDriver methods ForwardingSandboxDriver does not forward").isEmpty();
    }
}
