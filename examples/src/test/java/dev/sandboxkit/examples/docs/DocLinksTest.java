package dev.sandboxkit.examples.docs;

import dev.sandboxkit.examples.docs.Markdown.Page;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of README.md and docs/ leads somewhere: the file or directory exists, and an {@code #anchor}
 * names a heading of the page it points to, by GitHub's rules (lower case, spaces to '-', punctuation dropped, a
 * repeated heading numbered -1, -2, ...).
 */
class DocLinksTest {
    /** {@code [text](target)} and {@code ![alt](target)}; the target ends at the first space or ')'. */
    private static final Pattern LINK = Pattern.compile("!?\\[[^\\]]*]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern INLINE_CODE = Pattern.compile("`[^`]*`");

    @Test
    void everyRelativeLinkAndAnchorResolves() {
        List<Page> pages = Markdown.pages();
        Map<Path, Set<String>> anchors = new HashMap<>();
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Page page : pages) {
            List<String> prose = page.prose();
            for (int i = 0; i < prose.size(); i++) {
                // Links inside inline code are examples, not links.
                Matcher m = LINK.matcher(INLINE_CODE.matcher(prose.get(i)).replaceAll(""));
                while (m.find()) {
                    String target = m.group(1);
                    if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                        continue; // https:, mailto:, ...: not checked (no network here)
                    }
                    checked++;
                    String where = page.name() + ":" + (i + 1) + ": " + target;
                    int hash = target.indexOf('#');
                    String path = hash < 0 ? target : target.substring(0, hash);
                    Path file = path.isEmpty() ? page.file() : page.file().resolveSibling(path).normalize();
                    if (!file.startsWith(Markdown.root()) || !Files.exists(file)) {
                        broken.add(where + " (no such file)");
                        continue;
                    }
                    if (hash >= 0) {
                        String anchor = target.substring(hash + 1);
                        if (!file.toString().endsWith(".md")) {
                            broken.add(where + " (an anchor into a file that is not Markdown)");
                        } else if (!anchors.computeIfAbsent(file, DocLinksTest::anchorsOf).contains(anchor)) {
                            broken.add(where + " (no heading with that anchor; there are "
                                    + anchors.get(file) + ")");
                        }
                    }
                }
            }
        }
        assertThat(broken).as("broken links").isEmpty();
        assertThat(checked).as("relative links checked").isGreaterThan(100);
    }

    @Test
    void anchorsFollowGitHubsRules() {
        assertThat(slug("Named-volume workdirs (`docker.workdirs=volume`)")).isEqualTo("named-volume-workdirs-dockerworkdirsvolume");
        assertThat(slug("Fast exec: the command channel (Docker)")).isEqualTo("fast-exec-the-command-channel-docker");
        assertThat(slug("`SandboxManager.builder()`")).isEqualTo("sandboxmanagerbuilder");
        assertThat(slug("Agent tools (`sandbox-tools`)")).isEqualTo("agent-tools-sandbox-tools");
        assertThat(slug("snake_case and [a link](x.md)")).isEqualTo("snake_case-and-a-link");
    }

    private static Set<String> anchorsOf(Path file) {
        Page page = Markdown.pages().stream().filter(p -> p.file().equals(file)).findFirst().orElse(null);
        List<String> lines;
        if (page != null) {
            lines = page.prose();
        } else {
            try {
                lines = new Page(file, file.toString(), Files.readAllLines(file)).prose();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        Set<String> out = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : lines) {
            Matcher h = HEADING.matcher(line);
            if (h.matches()) {
                String slug = slug(h.group(1));
                int n = seen.merge(slug, 1, Integer::sum);
                out.add(n == 1 ? slug : slug + "-" + (n - 1));
            }
        }
        return out;
    }

    /** GitHub's anchor for a heading: the text of links kept, lower case, punctuation but '-' and '_' dropped. */
    static String slug(String heading) {
        String text = heading.replaceAll("!?\\[([^\\]]*)]\\([^)]*\\)", "$1");
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            i += Character.charCount(c);
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                out.appendCodePoint(c);
            } else if (c == ' ') {
                out.append('-');
            }
        }
        return out.toString().toLowerCase(Locale.ROOT);
    }
}
