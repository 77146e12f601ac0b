package dev.sandboxkit.examples.docs;

import dev.sandboxkit.SandboxConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settings table of docs/configuration.md is {@link SandboxConfig#keys()} rendered: a key added, renamed or given
 * another default in the core shows up in the docs, or this test fails. Regenerate the table with
 * {@code mvn -pl examples -am verify -Dtest=ConfigurationDocTest -Dsandboxkit.docs.write=true} (then review the diff).
 */
class ConfigurationDocTest {
    static final String BEGIN = "<!-- settings table: generated from SandboxConfig.keys() by ConfigurationDocTest -->";
    static final String END = "<!-- end of settings table -->";

    @Test
    void settingsTableIsTheCoresKeys() throws IOException {
        Path page = Markdown.root().resolve("docs/configuration.md");
        String text = Files.readString(page, StandardCharsets.UTF_8);
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        assertThat(begin).as("%s in %s", BEGIN, page).isNotNegative();
        assertThat(end).as("%s in %s", END, page).isGreaterThan(begin);
        String current = text.substring(begin + BEGIN.length(), end);
        String wanted = "\n" + table() + "\n";
        if (Boolean.getBoolean("sandboxkit.docs.write") && !current.equals(wanted)) {
            Files.writeString(page, text.substring(0, begin + BEGIN.length()) + wanted + text.substring(end),
                    StandardCharsets.UTF_8);
            return;
        }
        assertThat(current).as("the settings table of docs/configuration.md is out of date with SandboxConfig.keys(); "
                + "regenerate it with -Dsandboxkit.docs.write=true (see ConfigurationDocTest)").isEqualTo(wanted);
    }

    /** One row per key: the key, its type, its default ({@code java.io.tmpdir} named, not this machine's) and meaning. */
    static String table() {
        String tmp = Path.of(System.getProperty("java.io.tmpdir")).toString();
        StringBuilder out = new StringBuilder("| key (`sandboxkit.` + …) | type | default | meaning |\n|---|---|---|---|\n");
        for (SandboxConfig.Key key : SandboxConfig.keys()) {
            String def = key.defaultValue();
            if (def != null && def.startsWith(tmp)) {
                def = "${java.io.tmpdir}" + def.substring(tmp.length());
            }
            out.append("| `").append(key.name()).append("` | ").append(key.type().replace("|", "\\|")).append(" | ")
                    .append(def == null || def.isEmpty() ? "—" : "`" + def + "`").append(" | ")
                    .append(key.description().replace("|", "\\|")).append(" |\n");
        }
        return out.toString().stripTrailing();
    }
}
