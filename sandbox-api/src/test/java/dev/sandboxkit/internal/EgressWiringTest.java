package dev.sandboxkit.internal;

import dev.sandboxkit.EgressPolicy;
import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.SessionState;
import dev.sandboxkit.spi.SessionRecord;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How an egress policy travels: stored with the spec (rules, credential headers, TLS upstreams) and read back the
 * same; set from the one configuration model; refused where it could be bypassed; overridden on a session by
 * updateEgress until an acquire with another spec. The traffic itself is tested on the real engine
 * (EgressOnDockerContract in sandbox-docker).
 */
class EgressWiringTest {
    private static final SandboxSpec BASE = SandboxSpec.builder().image("img:1").build();
    private static final EgressPolicy FULL = EgressPolicy.builder().allowHost("pypi.org").allowHost("*.pythonhosted.org")
            .allowHost("github.com", 443).allowCidr("10.0.0.0/8").header("api.example.com", "Authorization", "Bearer s3cret")
            .allowHost("api.example.com").tlsUpstream("api.example.com").build();

    @Test
    void theSpecStoresThePolicyWholeAndReadsItBack() {
        SandboxSpec spec = BASE.toBuilder().egress(FULL).build();
        SandboxSpec back = SpecCodec.parse(SpecCodec.encode(spec));
        assertThat(back).isEqualTo(spec);
        assertThat(back.egress().headersFor("api.example.com")).containsEntry("Authorization", "Bearer s3cret");
        assertThat(back.egress().tlsUpstream("api.example.com")).isTrue();
        assertThat(back.egress().rules()).containsExactlyElementsOf(FULL.rules());
        SandboxSpec denyAll = BASE.toBuilder().egress(EgressPolicy.denyAll()).build();
        assertThat(SpecCodec.parse(SpecCodec.encode(denyAll)).egress()).as("deny-all is a proxy, not none")
                .isEqualTo(EgressPolicy.denyAll());
        assertThat(SpecCodec.encode(BASE)).as("a spec without egress keeps its encoding").doesNotContain("egress");
        assertThat(spec.toString()).as("a credential never reaches a log line").doesNotContain("s3cret");
    }

    @Test
    void ruleOrderSurvivesMoreThanAThousandRules() {
        EgressPolicy.Builder b = EgressPolicy.builder();
        for (int i = 0; i < 1200; i++) {
            b.allowHost("h" + i + ".example.org");
        }
        EgressPolicy many = b.build();
        assertThat(SpecCodec.decodeEgress(SpecCodec.encodeEgress(many)).rules()).containsExactlyElementsOf(many.rules());
    }

    @Test
    void egressIsRefusedWhereTheSandboxCouldGoAroundIt() {
        assertThatThrownBy(() -> BASE.toBuilder().network("bridge").egress(FULL).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("network \"none\"");
        assertThatThrownBy(() -> BASE.toBuilder().egress(FULL)
                .proxy(new SandboxSpec.Proxy("http://proxy:3128", null, null)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("choose one");
    }

    @Test
    void theConfigurationSetsItForEveryDoor() {
        SandboxConfig config = new SandboxConfig().set("spec.image", "img:1")
                .set("spec.egress", "pypi.org, *.pythonhosted.org,github.com:443").set("egress.max-connections", "8")
                .set("egress.idle-timeout", "30s");
        assertThat(config.spec().egress().rules()).containsExactly("pypi.org", "*.pythonhosted.org", "github.com:443");
        assertThat(config.getEgressMaxConnections()).isEqualTo(8);
        assertThat(config.changes()).containsEntry("spec.egress", "pypi.org,*.pythonhosted.org,github.com:443");
        assertThat(new SandboxConfig().set("spec.image", "img:1").spec().egress()).as("unset: no proxy").isNull();
        assertThatThrownBy(() -> new SandboxConfig().set("spec.egress", "pypi.org, http://bad"))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageStartingWith("sandboxkit.spec.egress: ")
                .hasMessageContaining("http://bad");
        assertThatThrownBy(() -> new SandboxConfig().set("egress.max-connections", "0"))
                .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("egress.max-connections");
    }

    @Test
    void anUpdateOverridesTheSpecUntilTheSpecChanges() {
        SandboxSpec spec = BASE.toBuilder().egress(EgressPolicy.parse("pypi.org")).build();
        SessionRecord rec = record(Map.of());
        assertThat(Egress.policyOf(rec, spec)).isEqualTo(spec.egress());
        EgressPolicy later = EgressPolicy.parse("github.com");
        SessionRecord updated = record(Map.of(Egress.ATTR_POLICY, Egress.encode(later)));
        assertThat(Egress.policyOf(updated, spec)).isEqualTo(later);
        SessionRecord off = record(Map.of(Egress.ATTR_POLICY, Egress.encode(null)));
        assertThat(Egress.policyOf(off, spec)).as("updateEgress(null): no egress").isNull();
        assertThat(Egress.policyOf(updated, BASE)).as("an update turns egress on for a spec without").isEqualTo(later);
        assertThat(Egress.specChanged(updated).attributes()).doesNotContainKey(Egress.ATTR_POLICY);
    }

    @Test
    void theEnvironmentPointsToolsAtTheEndpointOnlyWithEgress() {
        ContainerSetup setup = new ContainerSetup();
        SandboxSpec spec = BASE.toBuilder().egress(FULL).env("LANG", "C.UTF-8").build();
        assertThat(setup.execEnvironment(spec, true)).containsEntry("HTTPS_PROXY", "http://127.0.0.1:3128")
                .containsEntry("https_proxy", "http://127.0.0.1:3128").containsEntry("npm_config_https_proxy",
                        "http://127.0.0.1:3128").containsEntry("NO_PROXY", "localhost,127.0.0.1,::1")
                .containsEntry("LANG", "C.UTF-8");
        assertThat(setup.execEnvironment(BASE, false)).doesNotContainKey("HTTP_PROXY");
        assertThat(setup.execEnvironment(BASE, true)).as("turned on by an update").containsKey("HTTP_PROXY");
        assertThat(setup.execEnvironment(spec, false)).as("turned off by an update").doesNotContainKey("HTTP_PROXY");
    }

    private static SessionRecord record(Map<String, String> attributes) {
        Instant t = Instant.parse("2026-12-05T00:00:00Z");
        return SessionRecord.builder().sessionId("s").driver("fake").state(SessionState.ACTIVE).sandboxId("c")
                .workspace("/w").spec("x").specFingerprint("f").ephemeral(false).createdAt(t).lastActivity(t)
                .version(1).attributes(attributes).build();
    }
}
