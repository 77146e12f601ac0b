package dev.sandboxkit.mcp;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/configuration.md's table of the server's options is the command's: every option is there, every option there
 * exists, and an option that names a library setting shows that setting's key on its row.
 */
class FlagsDocTest {
    private static final Pattern FLAG = Pattern.compile("`(--[a-z-]+)");

    @Test
    void theDocsListEveryOptionAndItsSetting() throws IOException {
        List<String> rows = section().lines().filter(l -> l.startsWith("| `--") || l.startsWith("| —")).toList();
        Set<String> documented = new TreeSet<>();
        rows.forEach(row -> {
            Matcher m = FLAG.matcher(row.substring(0, row.indexOf('|', 2)));
            while (m.find()) {
                documented.add(m.group(1));
            }
        });
        Set<String> options = new TreeSet<>();
        for (OptionSpec option : new CommandLine(new ServerCommand(InputStream.nullInputStream(), OutputStream.nullOutputStream(), Map.of())).getCommandSpec().options()) {
            Arrays.stream(option.names()).filter(n -> n.startsWith("--")).forEach(options::add);
        }
        options.removeAll(Set.of("--help", "--version"));
        assertThat(documented).as("the options documented in docs/configuration.md#mcp-server-flags")
                .isEqualTo(options);
        ServerCommand.FLAGS.forEach((flag, key) -> assertThat(rows)
                .as("the row of %s names its setting %s", flag, key)
                .anyMatch(row -> row.substring(0, row.indexOf('|', 2)).contains("`" + flag + "`")
                        && row.contains("`" + key + "`")));
    }

    /** The "MCP server flags" section of docs/configuration.md (the tests run in the module's directory). */
    private static String section() throws IOException {
        String page = Files.readString(Path.of("..", "docs", "configuration.md"), StandardCharsets.UTF_8);
        int start = page.indexOf("## MCP server flags");
        assertThat(start).as("the MCP section of docs/configuration.md").isNotNegative();
        int end = page.indexOf("\n## ", start + 3);
        return end < 0 ? page.substring(start) : page.substring(start, end);
    }
}
