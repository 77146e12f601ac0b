package dev.sandboxkit.tools.internal;

import dev.sandboxkit.FileInfo;
import dev.sandboxkit.FileType;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.tools.ToolResult;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * read_file, write_file, edit_file and list_files, all through the escape-proof files API: nothing here runs in
 * the sandbox or follows what it planted.
 */
final class FileTools {
    /** Files larger than this are skipped by search_files. */
    static final long SEARCH_FILE_LIMIT = 4_000_000;
    /** Directories listings and searches show but do not descend into: big, and rarely what a model wants. */
    static final Set<String> NOT_EXPANDED = Set.of(".git", "node_modules");
    private static final int BINARY_SNIFF = 8192;

    private final ToolSettings settings;

    FileTools(ToolSettings settings) {
        this.settings = settings;
    }

    /** The path as the model should read it in answers: absolute under /workspace. */
    static String display(String path) {
        if (path == null || path.isEmpty() || path.equals(".")) {
            return SandboxSpec.WORKSPACE;
        }
        if (path.startsWith("/")) {
            return path;
        }
        String p = path.startsWith("./") ? path.substring(2) : path;
        return SandboxSpec.WORKSPACE + "/" + p;
    }

    static String checkPath(String path, String argument) {
        if (path.indexOf('\0') >= 0) {
            throw new ToolFailure("\"" + argument + "\" contains a NUL character; no file name can hold one.");
        }
        return path;
    }

    ToolResult read(SandboxFiles files, Args args) {
        String path = checkPath(args.string("path"), "path");
        FileInfo info = regularFile(files, path, "read");
        long start = args.integer("start_line", 1, 1, Long.MAX_VALUE);
        Long endArg = args.integer("end_line");
        if (endArg != null && endArg < start) {
            throw new ToolFailure("\"end_line\" (" + endArg + ") is before \"start_line\" (" + start + ").");
        }
        long end = endArg == null ? Long.MAX_VALUE : endArg;
        int limit = settings.readLimit();
        ByteArrayOutputStream kept = new ByteArrayOutputStream((int) Math.min(info.size(), limit) + 1);
        long line = 1;          // the line the next byte belongs to
        boolean cut = false;    // the read limit stopped it
        boolean eof = true;     // the whole file was read
        int last = -1;          // the last byte read
        try (InputStream in = files.newInputStream(path)) {
            byte[] buf = in.readNBytes(BINARY_SNIFF);
            if (Text.looksBinary(buf, 0, buf.length)) {
                return ToolResult.ok(display(path) + " is a binary file (" + Text.size(info.size()) + "); it is not "
                        + "shown. Inspect it with run_command (for example `od -c " + display(path) + " | head`).");
            }
            int n = buf.length;
            scan:
            while (n > 0) {
                for (int i = 0; i < n; i++) {
                    if (line > end) {
                        eof = false;
                        break scan;
                    }
                    if (line >= start) {
                        if (kept.size() >= limit) {
                            cut = true;
                            eof = false;
                            break scan;
                        }
                        kept.write(buf[i]);
                    }
                    last = buf[i];
                    if (buf[i] == '\n') {
                        line++;
                    }
                }
                buf = in.readNBytes(8192);
                n = buf.length;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + path, e);
        }
        long totalLines = last < 0 ? 0 : last == '\n' ? line - 1 : line; // meaningful when eof
        byte[] bytes = kept.toByteArray();
        if (bytes.length == 0) {
            if (last < 0) {
                return ToolResult.ok("(" + display(path) + " is empty)");
            }
            throw new ToolFailure(display(path) + " has " + Text.plural(totalLines, "line") + "; start_line " + start
                    + " is past its end.");
        }
        int length = bytes.length;
        boolean partialLine = false;
        if (cut) { // end on a line boundary when there is one, never inside a character
            int nl = lastNewline(bytes);
            if (nl >= 0) {
                length = nl + 1;
            } else {
                partialLine = true;
            }
        }
        int newlines = Text.countNewlines(bytes, 0, length);
        long lastShown = start + newlines - (bytes[length - 1] == '\n' ? 1 : 0);
        String text = Text.decode(bytes, 0, length);
        boolean ranged = start > 1 || endArg != null;
        if (!cut && !ranged) {
            return ToolResult.ok(text);
        }
        StringBuilder b = new StringBuilder(text);
        if (!text.endsWith("\n")) {
            b.append('\n');
        }
        b.append('[').append(display(path)).append(": ");
        if (partialLine) {
            b.append("line ").append(start).append(" is longer than the ").append(Text.size(limit))
                    .append(" read limit; this is its beginning. Use run_command (cut, head -c) to see the rest]");
        } else if (cut) {
            b.append("lines ").append(start).append('-').append(lastShown).append(" of a ").append(Text.size(info.size()))
                    .append(" file, cut at the ").append(Text.size(limit)).append(" read limit; continue with start_line=")
                    .append(lastShown + 1).append(']');
        } else if (eof) {
            b.append("lines ").append(start).append('-').append(lastShown).append(" of ").append(totalLines)
                    .append(", end of file]");
        } else {
            b.append("lines ").append(start).append('-').append(lastShown)
                    .append("; the file goes on: continue with start_line=").append(lastShown + 1).append(']');
        }
        return ToolResult.ok(b.toString());
    }

    private static int lastNewline(byte[] b) {
        for (int i = b.length - 1; i >= 0; i--) {
            if (b[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    ToolResult write(SandboxFiles files, Args args) {
        String path = checkPath(args.string("path"), "path");
        String content = args.string("content");
        byte[] bytes = utf8Within(content, "content", "write_file");
        FileInfo prior = existing(files, path);
        if (prior != null && prior.type() == FileType.DIRECTORY) {
            throw new ToolFailure(display(path) + " is a directory; give a file path.");
        }
        put(files, path, bytes, prior);
        String what = prior == null ? "new file" : "replaced " + Text.size(prior.size());
        return ToolResult.ok("Wrote " + Text.size(bytes.length) + " (" + Text.plural(lineCount(content), "line") + ") to "
                + display(path) + " (" + what + ").");
    }

    ToolResult edit(SandboxFiles files, Args args) {
        String path = checkPath(args.string("path"), "path");
        String oldString = args.string("old_string");
        String newString = args.string("new_string");
        boolean all = args.bool("replace_all", false);
        if (oldString.isEmpty()) {
            throw new ToolFailure("\"old_string\" is empty; give the exact text to replace (use write_file to create "
                    + "a file).");
        }
        if (oldString.equals(newString)) {
            throw new ToolFailure("\"old_string\" and \"new_string\" are the same; nothing would change.");
        }
        FileInfo info = regularFile(files, path, "edit");
        if (info.size() > settings.writeLimit()) {
            throw new ToolFailure(display(path) + " is " + Text.size(info.size()) + ", over the "
                    + Text.size(settings.writeLimit()) + " edit limit; change it with run_command (sed, for example).");
        }
        byte[] raw = files.readBytes(path);
        String text = strictUtf8(raw);
        if (text == null) {
            throw new ToolFailure(display(path) + " is not UTF-8 text; edit it with run_command.");
        }
        String from = oldString;
        String to = newString;
        List<Integer> at = occurrences(text, from);
        if (at.isEmpty() && text.contains("\r\n") && !from.contains("\r\n") && from.contains("\n")) {
            from = from.replace("\n", "\r\n"); // the file has Windows line ends; the model wrote Unix ones
            to = to.replace("\r\n", "\n").replace("\n", "\r\n");
            at = occurrences(text, from);
        }
        if (at.isEmpty()) {
            String hint = squash(text).contains(squash(oldString))
                    ? " A match exists if whitespace is ignored: copy the indentation and line breaks exactly."
                    : " Read the file again and copy the text exactly.";
            throw new ToolFailure("\"old_string\" was not found in " + display(path) + "." + hint);
        }
        if (at.size() > 1 && !all) {
            throw new ToolFailure("\"old_string\" occurs " + at.size() + " times in " + display(path) + " (lines "
                    + lines(text, at) + "); include more surrounding lines to make it unique, or set replace_all to "
                    + "true to replace every occurrence.");
        }
        StringBuilder b = new StringBuilder(text.length() + Math.max(0, (to.length() - from.length()) * at.size()));
        int prev = 0;
        for (int i : at) {
            b.append(text, prev, i).append(to);
            prev = i + from.length();
        }
        b.append(text, prev, text.length());
        byte[] bytes = utf8Within(b.toString(), "the edited file", "edit_file");
        put(files, path, bytes, info);
        return ToolResult.ok("Edited " + display(path) + ": replaced " + Text.plural(at.size(), "occurrence")
                + " (line" + (at.size() == 1 ? " " : "s ") + lines(text, at) + ").");
    }

    ToolResult list(SandboxFiles files, Args args) {
        String path = checkPath(args.string("path", ""), "path");
        boolean recursive = args.bool("recursive", false);
        long depth = recursive ? args.integer("max_depth", Catalog.DEFAULT_LIST_DEPTH, 1, Catalog.MAX_LIST_DEPTH) : 1;
        FileInfo root = files.stat(path);
        if (root.type() != FileType.DIRECTORY) {
            throw new ToolFailure(display(path) + " is " + describe(root) + ", not a directory.");
        }
        List<String> lines = new ArrayList<>();
        int[] counts = new int[4]; // directories, regular files, symbolic links, others (FIFOs, sockets, devices)
        boolean complete = walk(files, root.path(), "", (int) depth, lines, counts);
        if (lines.isEmpty()) {
            return ToolResult.ok("(" + display(path) + " is empty)");
        }
        StringBuilder b = new StringBuilder(display(path)).append(":\n");
        lines.forEach(l -> b.append(l).append('\n'));
        if (complete) {
            b.append('[').append(Text.count(counts[0])).append(counts[0] == 1 ? " directory, " : " directories, ")
                    .append(Text.plural(counts[1], "file"));
            if (counts[2] > 0) {
                b.append(", ").append(Text.plural(counts[2], "symbolic link"));
            }
            if (counts[3] > 0) {
                b.append(", ").append(Text.count(counts[3])).append(counts[3] == 1 ? " other entry" : " other entries");
            }
            b.append(']');
        } else {
            b.append("[listing stopped at ").append(Text.count(settings.listLimit()))
                    .append(" entries: list a subdirectory, or lower max_depth]");
        }
        return ToolResult.ok(b.toString());
    }

    /** Depth-first, sorted; returns false when the entry limit stopped it. */
    private boolean walk(SandboxFiles files, String dir, String prefix, int depth, List<String> out, int[] counts) {
        for (FileInfo e : files.list(dir)) {
            if (out.size() >= settings.listLimit()) {
                return false;
            }
            String name = prefix + e.name();
            switch (e.type()) {
                case DIRECTORY -> {
                    counts[0]++;
                    boolean expand = depth > 1 && !NOT_EXPANDED.contains(e.name());
                    out.add(name + "/" + (depth > 1 && !expand ? "  (not expanded)" : ""));
                    if (expand && !walk(files, e.path(), name + "/", depth - 1, out, counts)) {
                        return false;
                    }
                }
                case FILE -> {
                    counts[1]++;
                    out.add(name + "  (" + Text.size(e.size()) + ((e.permissions() & 0111) != 0 ? ", executable" : "") + ")");
                }
                case SYMLINK -> {
                    counts[2]++;
                    out.add(name + " -> " + e.linkTarget() + "  (symbolic link, not followed)");
                }
                default -> {
                    counts[3]++;
                    out.add(name + "  (" + describe(e) + ")");
                }
            }
        }
        return true;
    }

    static String describe(FileInfo e) {
        return switch (e.type()) {
            case FILE -> "a file";
            case DIRECTORY -> "a directory";
            case SYMLINK -> "a symbolic link to " + e.linkTarget();
            case FIFO -> "a FIFO";
            case SOCKET -> "a socket";
            case DEVICE -> "a device node";
        };
    }

    /** Stats a path that must be a regular file; anything else is the model's to fix. */
    static FileInfo regularFile(SandboxFiles files, String path, String verb) {
        FileInfo info = files.stat(path);
        if (info.type() == FileType.FILE) {
            return info;
        }
        String advice = info.type() == FileType.DIRECTORY ? " Use list_files to see what it holds."
                : info.type() == FileType.SYMLINK ? " File tools never follow links; use the target's path, or run_command."
                : "";
        throw new ToolFailure("Cannot " + verb + " " + display(path) + ": it is " + describe(info) + ", not a regular file."
                + advice);
    }

    private static FileInfo existing(SandboxFiles files, String path) {
        try {
            return files.stat(path);
        } catch (SandboxNotFoundException e) {
            return null;
        }
    }

    /** Writes atomically; an executable file stays executable (the upload path keeps the bit). */
    private static void put(SandboxFiles files, String path, byte[] bytes, FileInfo prior) {
        if (prior != null && prior.type() == FileType.FILE && (prior.permissions() & 0111) != 0) {
            String rel = prior.path();
            int slash = rel.lastIndexOf('/');
            String dir = slash < 0 ? "" : rel.substring(0, slash);
            files.uploadTar(dir, new ByteArrayInputStream(SingleFileTar.executable(rel.substring(slash + 1), bytes)));
        } else {
            files.write(path, bytes);
        }
    }

    private byte[] utf8Within(String s, String what, String tool) {
        // A UTF-8 encoding is at most 3 bytes per char: skip the copy when the string cannot be too large.
        if ((long) s.length() * 3 > settings.writeLimit()) {
            long size = utf8Length(s);
            if (size > settings.writeLimit()) {
                throw new ToolFailure(what + " is " + Text.size(size) + ", over the " + Text.size(settings.writeLimit())
                        + " limit of " + tool + ". Write large files in parts (write the first part, then append with "
                        + "run_command), or generate them with a command.");
            }
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static long utf8Length(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static String strictUtf8(byte[] raw) {
        for (byte x : raw) {
            if (x == 0) {
                return null;
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static List<Integer> occurrences(String text, String s) {
        List<Integer> at = new ArrayList<>();
        for (int i = text.indexOf(s); i >= 0; i = text.indexOf(s, i + s.length())) {
            at.add(i);
        }
        return at;
    }

    private static String lines(String text, List<Integer> offsets) {
        StringBuilder b = new StringBuilder();
        int line = 1;
        int pos = 0;
        int shown = 0;
        for (int off : offsets) {
            for (; pos < off; pos++) {
                if (text.charAt(pos) == '\n') {
                    line++;
                }
            }
            if (shown == 10) {
                b.append(", ...");
                break;
            }
            b.append(shown++ == 0 ? "" : ", ").append(line);
        }
        return b.toString();
    }

    private static String squash(String s) {
        return s.replaceAll("\\s+", " ").trim();
    }

    private static long lineCount(String s) {
        if (s.isEmpty()) {
            return 0;
        }
        long n = s.chars().filter(c -> c == '\n').count();
        return s.endsWith("\n") ? n : n + 1;
    }
}
