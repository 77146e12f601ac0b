package dev.sandboxkit.tools.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class JsonTest {

    @Test
    void parsesTheValuesToolArgumentsUse() {
        Object v = Json.parse(" {\"a\": \"x\\n\\u00e9\\ud83d\\ude00\\\"\", \"n\": -12, \"f\": 1.5e3, \"t\": true, \"z\": null,"
                + " \"l\": [1, [], {}], \"big\": 123456789012345678901234567890} ");
        assertThat(v).isInstanceOf(Map.class);
        Map<?, ?> m = (Map<?, ?>) v;
        assertThat(m.get("a")).isEqualTo("x\né😀\"");
        assertThat(m.get("n")).isEqualTo(-12L);
        assertThat(m.get("f")).isEqualTo(new BigDecimal("1.5e3"));
        assertThat(m.get("t")).isEqualTo(true);
        assertThat(m.containsKey("z")).isTrue();
        assertThat(m.get("z")).isNull();
        assertThat(m.get("l")).isEqualTo(List.of(1L, List.of(), Map.of()));
        assertThat(m.get("big")).isEqualTo(new BigDecimal("123456789012345678901234567890"));
        assertThat(List.<Object>copyOf(m.keySet())).isEqualTo(List.of("a", "n", "f", "t", "z", "l", "big"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "{\"a\":}", "{\"a\":1,}", "[1 2]", "{\"a\":1}x", "{'a':1}", "{\"a\":01}",
            "{\"a\":\"\u0001\"}", "{\"a\":\"\\x\"}", "{\"a\":1,\"a\":2}", "tru", "-", "1.", "{\"a\":\"\\u12\"}"})
    void refusesMalformedJson(String text) {
        assertThatThrownBy(() -> Json.parse(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("invalid JSON at offset");
    }

    @Test
    void boundsNesting() {
        String deep = "[".repeat(10_000) + "]".repeat(10_000);
        assertThatThrownBy(() -> Json.parse(deep)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nesting deeper than 64");
    }

    @Test
    void quotesWhatSchemasHold() {
        assertThat(Json.quote("a\"b\\c\nd\te\u0001")).isEqualTo("\"a\\\"b\\\\c\\nd\\te\\u0001\"");
        assertThat(Json.parse(Json.quote("round \" trip \\ \n é"))).isEqualTo("round \" trip \\ \n é");
    }
}
