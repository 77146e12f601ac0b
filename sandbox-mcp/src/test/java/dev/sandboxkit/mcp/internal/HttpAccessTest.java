package dev.sandboxkit.mcp.internal;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HttpAccessTest {

    @Test
    void originsMatchExactlyOrWithAnyPort() {
        HttpAccess a = new HttpAccess(null, true, List.of("http://localhost:*", "https://app.example"));
        assertThat(a.originAllowed("http://localhost")).isTrue();
        assertThat(a.originAllowed("http://localhost:6274")).isTrue();
        assertThat(a.originAllowed("HTTP://LOCALHOST:3000")).isTrue();
        assertThat(a.originAllowed("https://app.example")).isTrue();
        assertThat(a.originAllowed("http://localhost.evil.example")).isFalse();
        assertThat(a.originAllowed("http://localhost:80.evil.example")).isFalse();
        assertThat(a.originAllowed("https://app.example:8443")).isFalse();
        assertThat(a.originAllowed("null")).isFalse();
        assertThat(new HttpAccess(null, true, List.of()).originAllowed("http://localhost:1")).isFalse();
    }

    @Test
    void onlyLoopbackHostHeadersAreLoopback() {
        assertThat(HttpAccess.loopbackHost("127.0.0.1:8765")).isTrue();
        assertThat(HttpAccess.loopbackHost("localhost")).isTrue();
        assertThat(HttpAccess.loopbackHost("[::1]:8765")).isTrue();
        assertThat(HttpAccess.loopbackHost("127.1.2.3")).isTrue();
        assertThat(HttpAccess.loopbackHost("evil.example")).isFalse();
        assertThat(HttpAccess.loopbackHost("localhost.evil.example:80")).isFalse();
        assertThat(HttpAccess.loopbackHost("127.0.0.1.evil.example")).isFalse();
        assertThat(HttpAccess.loopbackHost("[::2]:80")).isFalse();
        assertThat(HttpAccess.loopbackHost("localhost:x")).isFalse();
        assertThat(HttpAccess.loopbackHost(null)).isFalse();
    }

    @Test
    void theBearerTokenMustMatch() {
        HttpAccess a = new HttpAccess("s3cret-token-123456", false, List.of());
        assertThat(a.authorized("Bearer s3cret-token-123456")).isTrue();
        assertThat(a.authorized("bearer s3cret-token-123456")).isTrue();
        assertThat(a.authorized("Bearer s3cret-token-12345")).isFalse();
        assertThat(a.authorized("Basic czNjcmV0")).isFalse();
        assertThat(a.authorized(null)).isFalse();
        assertThat(new HttpAccess(null, true, List.of()).authorized(null)).isTrue();
        assertThat(a.toString()).doesNotContain("s3cret");
    }

    @Test
    void originsAreCheckedWhenConfigured() {
        assertThatThrownBy(() -> new HttpAccess(null, true, List.of("localhost:3000")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new HttpAccess(" ", true, List.of())).isInstanceOf(IllegalArgumentException.class);
    }
}
