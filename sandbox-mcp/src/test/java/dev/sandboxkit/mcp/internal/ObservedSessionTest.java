package dev.sandboxkit.mcp.internal;

import io.modelcontextprotocol.spec.McpServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The delegating subclasses of the SDK's sessions ({@link ObservedStreamableProvider.ObservedSession} over HTTP,
 * {@link ObservedStdioProvider.ContextSession} on stdio) hand every call to the SDK's real session. A public method
 * one does not override would run on its inert superclass instead: an SDK upgrade that adds one must fail here.
 */
class ObservedSessionTest {

    @Test
    void everyPublicMethodOfTheSdkStreamableSessionIsDelegated() throws NoSuchMethodException {
        assertThat(undelegated(McpStreamableServerSession.class, ObservedStreamableProvider.ObservedSession.class))
                .as("public methods of the SDK session not delegated").isEmpty();
    }

    @Test
    void everyPublicMethodOfTheSdkStdioSessionIsDelegated() throws NoSuchMethodException {
        assertThat(undelegated(McpServerSession.class, ObservedStdioProvider.ContextSession.class))
                .as("public methods of the SDK session not delegated").isEmpty();
    }

    private static List<String> undelegated(Class<?> sdk, Class<?> ours) throws NoSuchMethodException {
        List<String> missing = new ArrayList<>();
        for (Method m : sdk.getMethods()) {
            if (Modifier.isStatic(m.getModifiers()) || m.getDeclaringClass() == Object.class) {
                continue;
            }
            Method own = ours.getMethod(m.getName(), m.getParameterTypes());
            // an interface default that only calls an overridden method is fine
            boolean delegated = own.getDeclaringClass() == ours || m.isDefault() && m.getName().equals("sendNotification");
            if (!delegated) {
                missing.add(m.toString());
            }
        }
        return missing;
    }
}
