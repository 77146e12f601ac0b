package dev.sandboxkit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SandboxSpecTest {

    private static SandboxSpec.Builder spec() {
        return SandboxSpec.builder().image("img:1");
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "10001", "10001:10001", "0:0", "2147483647", "2147483648", "2147483648:2147483648",
            "4294967294", "4294967294:4294967294", "1:4294967294", "007"})
    void acceptsTheWholeUnsigned32BitRangeLinuxAllows(String user) {
        assertThat(spec().user(user).build().user()).isEqualTo(user);
    }

    @ParameterizedTest
    @ValueSource(strings = {"4294967295", "4294967296", "1:4294967295", "99999999999", "18446744073709551616",
            "-1", "+1", "1:-1", "", ":", "1:", ":1", "1:2:3", "root", "1000:users", " 1000", "1000 ", "１２３",
            "1e3", "0x10"})
    void refusesAnythingElseWithAnIllegalArgumentException(String user) {
        assertThatThrownBy(() -> spec().user(user).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("user");
    }

    @Test
    void anOutOfRangeIdSaysTheRange() {
        assertThatThrownBy(() -> spec().user("4294967295").build()).hasMessageContaining("0..4294967294");
    }

    @ParameterizedTest
    @ValueSource(strings = {"busybox", "busybox:1.36", "python:3.12-slim", "library/python:3", "a/b/c/d:e",
            "sandboxkit-test:latest", "my_image__x.y-z--w:tag_1.0-rc", "localhost/img", "localhost:5000/img:1",
            "registry.example.com/team/img:1", "Registry.Example.COM:443/img", "[::1]:5000/img:1",
            "img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "img:1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "0123456789ab"})
    void acceptsDockerImageReferences(String image) {
        assertThat(spec().image(image).build().image()).isEqualTo(image);
    }

    @ParameterizedTest
    @ValueSource(strings = {"img\nINFO forged log line", "img\r", "img\t1", "img 1", " img", "img:1\u0000", "Python:3",
            "img:", "img:-tag", ":tag", "/img", "img/", "img//x", "img@sha256:short", "img@", "registry:port/img",
            "img..x", "img.-x", "-img", "img:\u2028", "img\u0085", "ímg"})
    void refusesAnythingElse(String image) {
        assertThatThrownBy(() -> spec().image(image).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("image");
    }

    @Test
    void refusesOverlongReferences() {
        String longName = "a".repeat(256);
        assertThatThrownBy(() -> spec().image(longName).build()).isInstanceOf(IllegalArgumentException.class);
        assertThat(spec().image("a".repeat(255)).build().image()).hasSize(255);
        assertThatThrownBy(() -> spec().image("img:" + "t".repeat(129)).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> spec().image("a-".repeat(100_000) + "!").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("200001 characters");
    }

    @Test
    void theMessageNeverCarriesControlCharactersRaw() {
        assertThatThrownBy(() -> spec().image("img\n2026-01-01 INFO forged\r\u001b[31m").build())
                .isInstanceOf(IllegalArgumentException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n", "\r", "\u001b")
                        .contains("img\\u000a2026-01-01 INFO forged\\u000d\\u001b[31m"));
        assertThatThrownBy(() -> spec().user("1\n2").build())
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n").contains("1\\u000a2"));
        assertThatThrownBy(() -> spec().env("A\u0000\nB", "v").build())
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n", "\u0000"));
    }
}
