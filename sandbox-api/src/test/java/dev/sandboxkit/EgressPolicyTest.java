package dev.sandboxkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class EgressPolicyTest {

    private final EgressPolicy policy =
            EgressPolicy.parse("pypi.org, *.pythonhosted.org,github.com:443,10.0.0.0/8,allowed.test");

    @Test
    void exactWildcardPortAndCidrRules() {
        assertThat(policy.decide("pypi.org", 443)).isEmpty();
        assertThat(policy.decide("PyPI.org.", 80)).isEmpty();
        assertThat(policy.decide("files.pythonhosted.org", 443)).isEmpty();
        assertThat(policy.decide("a.b.pythonhosted.org", 443)).isEmpty();
        assertThat(policy.decide("pythonhosted.org", 443)).isPresent();
        assertThat(policy.decide("evilpythonhosted.org", 443)).isPresent();
        assertThat(policy.decide("github.com", 443)).isEmpty();
        assertThat(policy.decide("github.com", 80)).isPresent();
        assertThat(policy.decide("10.1.2.3", 22)).isEmpty();
        assertThat(policy.decide("11.1.2.3", 22)).isPresent();
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "LOCALHOST", "localhost.", "127.0.0.1", "0.0.0.0", "[::1]", "::1",
        "[::ffff:127.0.0.1]", "2130706433", "0177.0.0.1", "0x7f.1", "127.1", "allowed.test@evil",
        "evil@allowed.test", "allowed.test:80", ""})
    void hostileSpellingsAreDenied(String host) {
        assertThat(policy.decide(host, 80)).as(host).isPresent();
    }

    @ParameterizedTest
    @ValueSource(strings = {"2130706433", "0177.0.0.1", "0x7f.1", "127.1", "127.0.0.1", "[::ffff:127.0.0.1]"})
    void everyInetAtonSpellingOfLoopbackIsOneLiteralMatchedByCidr(String host) {
        assertThat(EgressPolicy.literal(host)).as(host).hasValueSatisfying(a -> assertThat(a.isLoopbackAddress()).isTrue());
        assertThat(EgressPolicy.parse("127.0.0.0/8").decide(host, 80)).as(host).isEmpty();
        assertThat(EgressPolicy.parse("localhost").decide(host, 80)).as(host).isPresent();
    }

    @Test
    void reasonNamesTargetAndAllowList() {
        assertThat(policy.decide("denied.test", 443)).hasValueSatisfying(r -> assertThat(r)
                .contains("denied.test:443").contains("pypi.org, *.pythonhosted.org, github.com:443, 10.0.0.0/8"));
        assertThat(EgressPolicy.denyAll().decide("x.org", 1)).hasValueSatisfying(r -> assertThat(r).contains("nothing"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"a.org:0", "a.org:99999", "a.org:x", "10.0.0.0/33", "10.0.0/8",
        "127.0.0.1", "0x7f.1", "a b.org", "user@a.org", "*.", "::1/200"})
    void badEntriesAreRejectedByName(String entries) {
        assertThatThrownBy(() -> EgressPolicy.parse(entries)).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("'");
    }

    @Test
    void valueSemanticsAndBuilder() {
        EgressPolicy built = EgressPolicy.builder().allowHost("pypi.org").allowHost("*.pythonhosted.org")
                .allowHost("github.com", 443).allowCidr("10.0.0.0/8").allowHost("allowed.test").build();
        assertThat(built).isEqualTo(policy).hasSameHashCodeAs(policy);
        assertThat(built.toString()).contains("github.com:443");
        assertThat(EgressPolicy.parse(" ")).isSameAs(EgressPolicy.denyAll());
        assertThat(EgressPolicy.builder().allowCidr("::1", 8080).build().decide("[::1]", 8080)).isEmpty();
    }
}
