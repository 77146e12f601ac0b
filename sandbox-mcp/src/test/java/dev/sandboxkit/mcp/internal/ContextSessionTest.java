package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.spec.McpServerSession;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ObservedStdioProvider.ContextSession} hands every call to the SDK's real stdio session. A public method it
 * does not override would run on its inert superclass instead: an SDK upgrade that adds one must fail here.
 */
class ContextSessionTest {

    @Test
    void everyPublicMethodOfTheSdkSessionIsDelegated() throws NoSuchMethodException {
        List<String> missing = new java.util.ArrayList<>();
        for (Method m : McpServerSession.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers()) || m.getDeclaringClass() == Object.class) {
                continue;
            }
            Method own = ObservedStdioProvider.ContextSession.class.getMethod(m.getName(), m.getParameterTypes());
            boolean delegated = own.getDeclaringClass() == ObservedStdioProvider.ContextSession.class
                    // an interface default that only calls an overridden method is fine
                    || m.isDefault() && Arrays.asList("sendNotification").contains(m.getName());
            if (!delegated) {
                missing.add(m.toString());
            }
        }
        assertThat(missing).as("public methods of the SDK session not delegated").isEmpty();
    }
}
