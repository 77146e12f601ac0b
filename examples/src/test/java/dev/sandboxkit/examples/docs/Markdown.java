package dev.sandboxkit.examples.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The project's documentation as the doc tests read it: README.md and every page under docs/, their fenced code
 * blocks (with the {@code <!-- snippet: ... -->} directives above them) and their prose lines.
 */
final class Markdown {
    private static final Pattern FENCE = Pattern.compile("^\\s*(`{3,})([^`\\s]*)\\s*$");
    /** {@code <!-- snippet: ... -->} or {@code <!-- snippets: ... -->}, possibly over several lines. */
    private static final Pattern DIRECTIVE = Pattern.compile("^<!-- (snippets?):(.*?)-->\\s*$", Pattern.DOTALL);

    /** A Markdown file of the documentation. */
    record Page(Path file, String name, List<String> lines) {
        /** The lines outside fenced code blocks, others blanked, so that line numbers stay. */
        List<String> prose() {
            List<String> out = new ArrayList<>(lines.size());
            String fence = null;
            for (String line : lines) {
                Matcher m = FENCE.matcher(line);
                if (fence == null && m.matches()) {
                    fence = m.group(1);
                    out.add("");
                } else if (fence != null) {
                    if (line.strip().equals(fence)) {
                        fence = null;
                    }
                    out.add("");
                } else {
                    out.add(line);
                }
            }
            return out;
        }
    }

    /**
     * A fenced code block.
     *
     * @param page      where it is
     * @param language  the info string ({@code java}, {@code xml}, ...), empty if none
     * @param firstLine the 1-based line of its first code line (after the opening fence)
     * @param code      its lines
     * @param directive what the {@code <!-- snippet: ... -->} comment right above it says, empty if none
     * @param pageWide  what the page's earlier {@code <!-- snippets: ... -->} comments say, in order
     */
    record Block(Page page, String language, int firstLine, List<String> code, String directive,
                 List<String> pageWide) {
        /** For messages: {@code docs/files.md:17}. */
        String where() {
            return page.name() + ":" + firstLine;
        }

        String text() {
            return String.join("\n", code) + "\n";
        }
    }

    private Markdown() {
    }

    /** The repository's root: README.md and docs/ are below it. */
    static Path root() {
        String root = System.getProperty("sandboxkit.docs.root");
        if (root == null || root.isBlank()) {
            throw new IllegalStateException("sandboxkit.docs.root is not set (the examples' pom sets it)");
        }
        return Path.of(root).toAbsolutePath().normalize();
    }

    /** README.md and docs/**&#47;*.md, in a stable order. */
    static List<Page> pages() {
        Path root = root();
        List<Path> files = new ArrayList<>();
        files.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted(Comparator.naturalOrder()).forEach(files::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<Page> pages = new ArrayList<>();
        for (Path file : files) {
            try {
                pages.add(new Page(file, root.relativize(file).toString().replace('\\', '/'),
                        Files.readAllLines(file, StandardCharsets.UTF_8)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return pages;
    }

    /** Every fenced block of every page. */
    static List<Block> blocks() {
        List<Block> out = new ArrayList<>();
        for (Page page : pages()) {
            out.addAll(blocks(page));
        }
        return out;
    }

    /** The fenced blocks of a page, each with the directive right above it and the page-wide ones before it. */
    static List<Block> blocks(Page page) {
        List<Block> out = new ArrayList<>();
        List<String> lines = page.lines();
        List<String> pageWide = new ArrayList<>();
        StringBuilder comment = null;
        String pending = "";
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (comment != null || line.startsWith("<!-- snippet")) {
                comment = comment == null ? new StringBuilder(line) : comment.append('\n').append(line);
                if (line.contains("-->")) {
                    Matcher d = DIRECTIVE.matcher(comment);
                    if (!d.matches()) {
                        throw new IllegalStateException(page.name() + ":" + (i + 1) + ": not a snippet directive: "
                                + comment);
                    }
                    if (d.group(1).equals("snippets")) {
                        pageWide.add(d.group(2).strip());
                    } else {
                        pending = d.group(2).strip();
                    }
                    comment = null;
                }
                continue;
            }
            Matcher m = FENCE.matcher(line);
            if (!m.matches()) {
                if (!line.isBlank()) {
                    pending = ""; // a directive belongs to the block right below it
                }
                continue;
            }
            String fence = m.group(1);
            int first = i + 2;
            List<String> code = new ArrayList<>();
            for (i++; i < lines.size() && !lines.get(i).strip().equals(fence); i++) {
                code.add(lines.get(i));
            }
            if (i == lines.size()) {
                throw new IllegalStateException(page.name() + ":" + (first - 1) + ": a code block that never ends");
            }
            out.add(new Block(page, m.group(2), first, List.copyOf(code), pending, List.copyOf(pageWide)));
            pending = "";
        }
        return out;
    }
}
