package dev.sandboxkit.tools.internal;

import dev.sandboxkit.FileInfo;
import dev.sandboxkit.FileType;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.tools.ToolResult;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * search_files: a grep that runs in the JVM over the files API, so it follows nothing the sandbox planted. The
 * model's regular expression runs on the host, so matching is bounded: every line is matched against a
 * deadline (a backtracking pattern cannot hold a thread), and the bytes scanned per call are capped.
 */
final class SearchTool {
    static final long MAX_SCANNED_BYTES = 256_000_000;
    static final long DEADLINE_NANOS = 20_000_000_000L;
    private static final int MAX_LINE_SHOWN = 300;
    private static final int MAX_DEPTH = 64;

    private final ToolSettings settings;

    SearchTool(ToolSettings settings) {
        this.settings = settings;
    }

    ToolResult run(SandboxFiles files, Args args) {
        String patternText = args.string("pattern");
        if (patternText.isEmpty()) {
            throw new ToolFailure("\"pattern\" is empty: give the text or regular expression to find.");
        }
        String path = FileTools.checkPath(args.string("path", ""), "path");
        int flags = args.bool("ignore_case", false) ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0;
        if (args.bool("literal", false)) {
            flags |= Pattern.LITERAL;
        }
        Pattern pattern;
        try {
            pattern = Pattern.compile(patternText, flags);
        } catch (PatternSyntaxException e) {
            throw new ToolFailure("\"pattern\" is not a valid regular expression (" + e.getDescription() + " near index "
                    + e.getIndex() + "). Escape special characters, or set literal to true.");
        }
        String glob = args.string("glob");
        PathMatcher matcher = null;
        if (glob != null && !glob.isEmpty()) {
            try {
                matcher = FileSystems.getDefault().getPathMatcher("glob:" + glob);
            } catch (IllegalArgumentException e) {
                throw new ToolFailure("\"glob\" is not a valid glob: " + e.getMessage());
            }
        }
        int max = (int) args.integer("max_results", Math.min(Catalog.DEFAULT_SEARCH_RESULTS, settings.searchLimit()), 1,
                settings.searchLimit());
        Search s = new Search(files, pattern, matcher, max, System.nanoTime() + DEADLINE_NANOS);
        FileInfo root = files.stat(path);
        if (root.type() == FileType.DIRECTORY) {
            s.walk(root.path(), "", 0);
        } else if (root.type() == FileType.FILE) {
            s.file(root, root.name());
        } else {
            throw new ToolFailure(FileTools.display(path) + " is " + FileTools.describe(root) + "; give a directory or "
                    + "a regular file.");
        }
        return ToolResult.ok(s.render(FileTools.display(path)));
    }

    private static final class Search {
        final SandboxFiles files;
        final Pattern pattern;
        final PathMatcher glob;
        final int max;
        final long deadline;
        final List<String> hits = new ArrayList<>();
        long scanned;
        int filesSearched;
        int skipped;
        String stopped;

        Search(SandboxFiles files, Pattern pattern, PathMatcher glob, int max, long deadline) {
            this.files = files;
            this.pattern = pattern;
            this.glob = glob;
            this.max = max;
            this.deadline = deadline;
        }

        void walk(String dir, String prefix, int depth) {
            if (depth > MAX_DEPTH) {
                return;
            }
            for (FileInfo e : files.list(dir)) {
                if (stopped != null) {
                    return;
                }
                String rel = prefix + e.name();
                if (e.type() == FileType.DIRECTORY && !FileTools.NOT_EXPANDED.contains(e.name())) {
                    walk(e.path(), rel + "/", depth + 1);
                } else if (e.type() == FileType.FILE && (glob == null || glob.matches(Path.of(rel))
                        || glob.matches(Path.of(e.name())))) {
                    file(e, rel);
                }
            }
        }

        void file(FileInfo e, String rel) {
            if (e.size() > FileTools.SEARCH_FILE_LIMIT) {
                skipped++;
                return;
            }
            if (scanned + e.size() > MAX_SCANNED_BYTES) {
                stopped = "searched " + Text.size(scanned) + ", the most one search reads";
                return;
            }
            try (InputStream in = files.newInputStream(e.path())) {
                byte[] head = in.readNBytes(8192);
                for (byte x : head) {
                    if (x == 0) {
                        return; // binary
                    }
                }
                filesSearched++;
                scanned += e.size();
                InputStream all = new SequenceInputStream(new ByteArrayInputStream(head), in);
                BufferedReader r = new BufferedReader(new InputStreamReader(all, StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPLACE).onUnmappableCharacter(CodingErrorAction.REPLACE)));
                String line;
                long number = 0;
                while ((line = r.readLine()) != null) {
                    number++;
                    Matcher m = pattern.matcher(new Deadline(line, deadline));
                    boolean found;
                    try {
                        found = m.find();
                    } catch (Deadline.Passed passed) {
                        stopped = "the pattern took too long to match (over " + DEADLINE_NANOS / 1_000_000_000
                                + " s); simplify it";
                        return;
                    }
                    if (found) {
                        String shown = line.length() > MAX_LINE_SHOWN ? line.substring(0, MAX_LINE_SHOWN) + " ..." : line;
                        hits.add(rel + ":" + number + ": " + shown);
                        if (hits.size() >= max) {
                            stopped = "reached max_results (" + max + ")";
                            return;
                        }
                    }
                }
            } catch (SandboxNotFoundException | SandboxFileException gone) {
                skipped++; // removed or swapped while searching: the sandbox owns these files
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }

        String render(String where) {
            StringBuilder b = new StringBuilder();
            if (hits.isEmpty()) {
                b.append("No matches in ").append(where).append(" (").append(Text.plural(filesSearched, "file"))
                        .append(" searched)");
            } else {
                hits.forEach(h -> b.append(h).append('\n'));
                b.append('[').append(Text.count(hits.size())).append(hits.size() == 1 ? " match" : " matches")
                        .append(" in ").append(where).append(", ").append(Text.plural(filesSearched, "file"))
                        .append(" searched");
            }
            if (skipped > 0) {
                b.append("; ").append(Text.plural(skipped, "file")).append(" over ")
                        .append(Text.size(FileTools.SEARCH_FILE_LIMIT)).append(" or unreadable skipped");
            }
            if (stopped != null) {
                b.append("; stopped early: ").append(stopped);
            }
            if (!hits.isEmpty()) {
                b.append(']');
            }
            return b.toString();
        }
    }

    /**
     * A line that throws once the search's deadline has passed: {@link Matcher} reads its input through
     * {@code charAt}, so even a catastrophically backtracking pattern notices within a few thousand steps.
     */
    private static final class Deadline implements CharSequence {
        static final class Passed extends RuntimeException {
            private static final long serialVersionUID = 1L;

            Passed() {
                super(null, null, false, false);
            }
        }

        private final CharSequence s;
        private final long deadline;
        private int reads;

        Deadline(CharSequence s, long deadline) {
            this.s = s;
            this.deadline = deadline;
        }

        @Override
        public char charAt(int index) {
            if ((++reads & 0xFFF) == 0 && System.nanoTime() > deadline) {
                throw new Passed();
            }
            return s.charAt(index);
        }

        @Override
        public int length() {
            return s.length();
        }

        @Override
        public CharSequence subSequence(int start, int end) {
            return new Deadline(s.subSequence(start, end), deadline);
        }

        @Override
        public String toString() {
            return s.toString();
        }
    }
}
