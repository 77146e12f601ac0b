package dev.sandboxkit.kubernetes;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class NamesTest {

    @Test
    void validLabelValuesAreKeptAsTheyAre() {
        for (String id : new String[] {"a", "s1", "Session-42", "a.b_c-d", "x".repeat(63)}) {
            assertThat(Names.sessionLabel(id)).isEqualTo(id);
        }
    }

    @Test
    void invalidCharactersAreReplacedAndAHashAdded() {
        String id = "Tck:user@example.com+a=b_c.d";
        String label = Names.sessionLabel(id);

        assertThat(label).isEqualTo("Tck_user_example.com_a_b_c.d-" + Names.hash(id));
        assertThat(Names.isValidLabelValue(label)).isTrue();
    }

    @Test
    void trailingPunctuationAndLengthAreFixedWithAHash() {
        assertThat(Names.sessionLabel("abc-")).isEqualTo("abc-" + Names.hash("abc-"));
        assertThat(Names.sessionLabel("abc:")).isEqualTo("abc-" + Names.hash("abc:"));
        String longest = "L" + "x".repeat(127);
        String label = Names.sessionLabel(longest);
        assertThat(label).hasSize(63).startsWith("Lxxx").endsWith("-" + Names.hash(longest));
        assertThat(Names.isValidLabelValue(label)).isTrue();
        String cutAtDot = "a".repeat(51) + "." + "b".repeat(20);
        assertThat(Names.sessionLabel(cutAtDot)).isEqualTo("a".repeat(51) + "-" + Names.hash(cutAtDot));
    }

    @Test
    void idsThatSanitiseAlikeGetDifferentLabels() {
        Set<String> labels = new HashSet<>();
        for (String id : new String[] {"a:b", "a@b", "a+b", "a=b", "a_b"}) {
            labels.add(Names.sessionLabel(id));
        }
        assertThat(labels).hasSize(5);
    }

    @Test
    void podAndClaimNamesAreDnsLabels() {
        for (String id : new String[] {"s1", "Tck:user@example.com+a=b_c.d", "L" + "x".repeat(127), "___", "9.9"}) {
            assertThat(Names.isDnsLabel(Names.podName(id))).as("pod name for %s", id).isTrue();
            assertThat(Names.isDnsLabel(Names.claimName(id))).as("claim name for %s", id).isTrue();
            assertThat(Names.isDnsLabel(Names.networkPolicyName(Names.podName(id)))).isTrue();
        }
        assertThat(Names.podName("s1")).isNotEqualTo(Names.podName("s1"));
        assertThat(Names.claimName("s1")).isEqualTo(Names.claimName("s1"));
        assertThat(Names.claimName("A")).isNotEqualTo(Names.claimName("a"));
        assertThat(Names.slug("___")).isEqualTo("session");
    }

    @Test
    void execIdsAreRandomHex() {
        assertThat(Names.execId()).matches("[0-9a-f]{16}").isNotEqualTo(Names.execId());
    }

    @Test
    void workspaceLocationsRoundTrip() {
        assertThat(WorkspaceLocation.parse("pvc:agents/sbx-ws-a-0123456789")).satisfies(l -> {
            assertThat(l.namespace()).isEqualTo("agents");
            assertThat(l.claim()).isEqualTo("sbx-ws-a-0123456789");
            assertThat(l.isEmptyDir()).isFalse();
            assertThat(l.toString()).isEqualTo("pvc:agents/sbx-ws-a-0123456789");
        });
        assertThat(WorkspaceLocation.parse(WorkspaceLocation.emptyDir("a:b")).isEmptyDir()).isTrue();
        for (String bad : new String[] {"/tmp/x", "pvc:", "pvc:ns/", "pvc:/c", "pvc:NS/c", "pvc:ns/c/d"}) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> WorkspaceLocation.parse(bad))
                    .isInstanceOf(dev.sandboxkit.SandboxConfigurationException.class);
        }
    }
}
