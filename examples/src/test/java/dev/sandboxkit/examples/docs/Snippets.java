package dev.sandboxkit.examples.docs;

import dev.sandboxkit.examples.docs.Markdown.Block;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.StandardLocation;
import javax.tools.ToolProvider;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The documentation's Java snippets as compilation units: each {@code ```java} block becomes one unit in a package
 * of its own, either as it stands (a block that declares types) or wrapped in a method of a generated class (a block
 * of statements), with the common imports and what its {@code <!-- snippet: context ... -->} comment declares.
 * A block marked {@code run} gets a second unit, the one that runs: the test image in place of the reader's image,
 * a temporary workspace root in place of the reader's, and its {@code expression; // value} lines as assertions.
 */
final class Snippets {
    /** What every snippet may use without importing it: each module's public package and the JDK's usual ones. */
    static final List<String> IMPORTS = List.of("dev.sandboxkit.*", "dev.sandboxkit.spi.*", "dev.sandboxkit.docker.*",
            "dev.sandboxkit.kubernetes.*", "dev.sandboxkit.store.jdbc.*", "dev.sandboxkit.storage.s3.*",
            "dev.sandboxkit.tools.*", "dev.sandboxkit.langchain4j.*", "dev.sandboxkit.spring.ai.*",
            "dev.sandboxkit.micrometer.*", "dev.sandboxkit.mcp.*", "dev.sandboxkit.testkit.*", "java.io.*",
            "java.net.*", "java.nio.file.*", "java.time.*", "java.util.*", "static java.nio.charset.StandardCharsets.UTF_8");
    /** The image readers see, replaced by the test image in runs (no test may pull). */
    static final String READERS_IMAGE = "\"python:3.12-slim\"";
    /** The workspace root readers see, replaced by a temporary directory in runs. */
    static final String READERS_ROOT = "Path.of(\"/var/lib/sandboxkit\")";
    /** The system property that holds the temporary workspace root of a run. */
    static final String ROOT_PROPERTY = "sandboxkit.docs.workspaceRoot";
    /** The class that wraps a block of statements; its {@code run()} method holds them. */
    static final String WRAPPER = "Snippet";

    private static final Pattern IMPORT = Pattern.compile("import\\s+(static\\s+)?[\\w.]+(\\.\\*)?\\s*;");
    private static final Pattern TOP_LEVEL_OF_A_TYPE = Pattern.compile(
            "^\\s*(@\\w.*|((public|abstract|final|sealed|non-sealed|static)\\s+)*(class|interface|record|enum)\\s.*|}.*|//.*|/?\\*.*)$");
    /** The comment of an expectation: a literal (maybe followed by a colon and prose). */
    private static final Pattern EXPECTED = Pattern.compile(
            "^(\"(?:[^\"\\\\]|\\\\.)*\"|-?\\d+|true|false|[A-Z][A-Z0-9_]+)(?::.*)?$");

    /**
     * One generated compilation unit.
     *
     * @param block     the documentation block it comes from
     * @param pkg       its package
     * @param className the class to load to run it ({@link #WRAPPER}, or the block's first type)
     * @param source    the unit's text
     * @param lines     for each line of {@code source} (0-based), the documentation line it stands for
     * @param forRun    whether this is the unit that runs
     * @param statements whether the block is statements (wrapped) rather than type declarations
     */
    record Unit(Block block, String pkg, String className, String source, int[] lines, boolean forRun,
                boolean statements) {
        String fileName() {
            return pkg.replace('.', '/') + "/" + className + ".java";
        }
    }

    /** What the comment above a block asks. */
    record Directive(boolean run, List<String> imports, String members) {
        static Directive of(Block block) {
            boolean run = false;
            List<String> imports = new ArrayList<>();
            StringBuilder members = new StringBuilder();
            List<String> all = new ArrayList<>(block.pageWide());
            all.add(block.directive());
            for (int k = 0; k < all.size(); k++) {
                String rest = all.get(k).strip();
                if (rest.startsWith("run")) {
                    if (k < all.size() - 1) {
                        throw new IllegalArgumentException(block.where() + ": 'run' belongs above one block, not in a "
                                + "page-wide <!-- snippets: --> comment");
                    }
                    run = true;
                    rest = rest.substring(3).strip();
                }
                if (rest.isEmpty()) {
                    continue;
                }
                if (!rest.startsWith("context")) {
                    throw new IllegalArgumentException(block.where() + ": a snippet comment says 'run' and/or "
                            + "'context <java>', not: " + rest);
                }
                Matcher m = IMPORT.matcher(rest.substring("context".length()));
                StringBuilder others = new StringBuilder();
                while (m.find()) {
                    imports.add(m.group().replaceAll("\\s+", " "));
                    m.appendReplacement(others, "");
                }
                m.appendTail(others);
                if (!others.toString().isBlank()) {
                    members.append(others.toString().strip()).append('\n');
                }
            }
            return new Directive(run, imports, members.toString());
        }
    }

    private Snippets() {
    }

    /** The units of every Java block: one to compile as readers see it, and one more to run where asked. */
    static List<Unit> units(List<Block> blocks, String testImage) {
        List<Unit> units = new ArrayList<>();
        for (Block block : blocks) {
            if (!block.language().equals("java")) {
                continue;
            }
            String base = "docsnippets." + block.page().name().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_")
                    + ".l" + block.firstLine();
            Directive directive = Directive.of(block);
            units.add(unit(block, directive, base, false, testImage));
            if (directive.run()) {
                units.add(unit(block, directive, base + ".run", true, testImage));
            }
        }
        return units;
    }

    private static Unit unit(Block block, Directive directive, String pkg, boolean forRun, String testImage) {
        List<String> code = new ArrayList<>();
        List<String> imports = new ArrayList<>(directive.imports());
        for (String line : block.code()) {
            String stripped = line.strip();
            if (stripped.startsWith("import ") && stripped.endsWith(";") && code.stream().allMatch(String::isBlank)) {
                imports.add(stripped);
                code.add("");
                continue;
            }
            // "{ ... }" stands for a body the reader writes.
            line = line.replaceAll("\\{\\s*\\.\\.\\.\\s*}", "{ }");
            if (forRun) {
                line = line.replace(READERS_IMAGE, "\"" + testImage + "\"")
                        .replace(READERS_ROOT, "Path.of(System.getProperty(\"" + ROOT_PROPERTY + "\"))");
            }
            code.add(line);
        }
        boolean statements = !declaresTypesOnly(code);
        List<String> out = new ArrayList<>();
        List<Integer> map = new ArrayList<>();
        int directiveLine = block.firstLine() - 1; // the opening fence: the comment is right above it
        out.add("package " + pkg + ";");
        map.add(directiveLine);
        for (String i : IMPORTS) {
            out.add("import " + i + ";");
            map.add(directiveLine);
        }
        for (String i : imports) {
            out.add(i);
            map.add(directiveLine);
        }
        String className;
        if (statements) {
            className = WRAPPER;
            out.add("@SuppressWarnings(\"all\") public class " + WRAPPER + " {");
            map.add(directiveLine);
            for (String m : directive.members().split("\n")) {
                out.add(m);
                map.add(directiveLine);
            }
            out.add("public void run() throws Exception {");
            map.add(directiveLine);
            for (int i = 0; i < code.size(); i++) {
                String line = code.get(i);
                String expectation = forRun ? expectation(line, block.page().name() + ":" + (block.firstLine() + i)) : null;
                if (expectation != null) {
                    line = expectation;
                }
                out.add(line);
                map.add(block.firstLine() + i);
            }
            out.add("}");
            map.add(block.firstLine() + code.size());
            out.add("private static void expect(Object actual, Object expected, String where) {"
                    + " if (!String.valueOf(actual).equals(String.valueOf(expected))) throw new AssertionError(where"
                    + " + \": the documentation says \" + show(expected) + \", the code answered \" + show(actual)); }");
            out.add("private static String show(Object o) { return o instanceof String s ? '\"' + s.replace(\"\\n\","
                    + " \"\\\\n\") + '\"' : String.valueOf(o); }");
            out.add("}");
            for (int i = 0; i < 3; i++) {
                map.add(block.firstLine() + code.size());
            }
        } else {
            if (!directive.members().isBlank()) {
                throw new IllegalArgumentException(block.where() + ": a block that declares types takes imports only "
                        + "from its context comment, no declarations");
            }
            Matcher type = Pattern.compile("(?m)^\\s*(?:@\\w+(?:\\([^)]*\\))?\\s*)*(?:(?:public|abstract|final)\\s+)*"
                    + "(?:class|interface|record|enum)\\s+(\\w+)").matcher(String.join("\n", code));
            if (!type.find()) {
                throw new IllegalArgumentException(block.where() + ": no type found in a block of declarations");
            }
            className = type.group(1);
            for (int i = 0; i < code.size(); i++) {
                out.add(code.get(i));
                map.add(block.firstLine() + i);
            }
        }
        return new Unit(block, pkg, className, String.join("\n", out) + "\n",
                map.stream().mapToInt(Integer::intValue).toArray(), forRun, statements);
    }

    /**
     * {@code expression; // value} as {@code expect(expression, value, where);}, or null when the line is not that:
     * one statement that starts with a name, and a comment that starts with a literal (a string, a number,
     * {@code true}, {@code false}, an enum constant), maybe followed by a colon and prose.
     */
    private static String expectation(String line, String where) {
        String code = blankLiterals(line);
        int comment = code.indexOf("//");
        if (comment < 0) {
            return null;
        }
        Matcher value = EXPECTED.matcher(line.substring(comment + 2).strip());
        String statement = line.substring(0, comment).strip();
        String statementCode = code.substring(0, comment).strip();
        if (!value.matches() || !statement.endsWith(";") || !Character.isJavaIdentifierStart(statement.charAt(0))
                || statementCode.indexOf(';') < statementCode.length() - 1) {
            return null;
        }
        String expected = value.group(1).matches("[A-Z][A-Z0-9_]+") ? "\"" + value.group(1) + "\"" : value.group(1);
        String indent = line.substring(0, line.indexOf(statement));
        return indent + "expect(" + statement.substring(0, statement.length() - 1) + ", " + expected + ", \"" + where
                + "\");";
    }

    /** The line with the insides of its string and character literals blanked, so that only code has '{', ';', '//'. */
    private static String blankLiterals(String line) {
        StringBuilder out = new StringBuilder(line);
        char quote = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quote != 0) {
                if (c == '\\' && i + 1 < line.length()) {
                    out.setCharAt(i++, ' ');
                    out.setCharAt(i, ' ');
                } else if (c == quote) {
                    quote = 0;
                } else {
                    out.setCharAt(i, ' ');
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '/' && i + 1 < line.length() && line.charAt(i + 1) == '/') {
                break;
            }
        }
        return out.toString();
    }

    /** Whether every line outside braces belongs to a type declaration (then the block is a compilation unit). */
    private static boolean declaresTypesOnly(List<String> code) {
        int depth = 0;
        boolean any = false;
        for (String line : code) {
            if (depth == 0 && !line.isBlank()) {
                if (!TOP_LEVEL_OF_A_TYPE.matcher(line).matches()) {
                    return false;
                }
                any |= !line.strip().startsWith("//");
            }
            depth += braces(line);
        }
        return any;
    }

    /** Opening minus closing braces of a line, outside literals and comments. */
    private static int braces(String line) {
        String code = blankLiterals(line);
        int comment = code.indexOf("//");
        code = comment < 0 ? code : code.substring(0, comment);
        return (int) (code.chars().filter(c -> c == '{').count() - code.chars().filter(c -> c == '}').count());
    }

    /**
     * Compiles the units in one javac run.
     *
     * @return one message per error, each naming the documentation's file and line, empty if all compiled
     */
    static List<String> compile(List<Unit> units, List<Path> classpath, Path output) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        Map<URI, Unit> byUri = new LinkedHashMap<>();
        List<JavaFileObject> sources = new ArrayList<>();
        for (Unit unit : units) {
            URI uri = URI.create("string:///" + unit.fileName());
            byUri.put(uri, unit);
            sources.add(new SimpleJavaFileObject(uri, JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return unit.source();
                }
            });
        }
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
            Files.createDirectories(output);
            files.setLocation(StandardLocation.CLASS_OUTPUT, List.of(output.toFile()));
            files.setLocation(StandardLocation.CLASS_PATH, classpath.stream().map(Path::toFile).toList());
            // No annotation processing (the class path holds processors, Spring's say, that snippets do not need); on a
            // syntax error go on to attribution, so that one run reports every snippet that does not compile.
            List<String> options = List.of("--release", "17", "-XDshould-stop.ifError=FLOW", "-proc:none", "-implicit:none", "-nowarn", "-Xlint:none",
                    "-encoding", "UTF-8");
            javac.getTask(null, files, diagnostics, options, null, sources).call();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> errors = new ArrayList<>();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            Unit unit = d.getSource() == null ? null : byUri.get(d.getSource().toUri());
            if (unit == null) {
                errors.add(d.getMessage(Locale.ROOT));
                continue;
            }
            int generated = (int) d.getLineNumber() - 1;
            int docLine = generated >= 0 && generated < unit.lines().length ? unit.lines()[generated] : unit.block().firstLine();
            String code = generated >= 0 ? unit.source().split("\n", -1)[generated].strip() : "";
            errors.add(unit.block().page().name() + ":" + docLine + (unit.forRun() ? " (as run)" : "") + ": "
                    + d.getMessage(Locale.ROOT).lines().limit(2).map(String::strip).reduce((x, y) -> x + " (" + y + ")")
                    .orElse("") + "\n      " + code);
        }
        return errors;
    }

    /** The class path of the examples' tests, as the pom writes it, with the module's own classes. */
    static List<Path> classpath() {
        String file = System.getProperty("sandboxkit.docs.classpath");
        if (file == null || file.isBlank()) {
            throw new IllegalStateException("sandboxkit.docs.classpath is not set (the examples' pom sets it)");
        }
        List<Path> out = new ArrayList<>();
        out.add(Path.of("target", "classes").toAbsolutePath());
        out.add(Path.of("target", "test-classes").toAbsolutePath());
        try {
            for (String entry : Files.readString(Path.of(file), StandardCharsets.UTF_8).trim().split(File.pathSeparator)) {
                if (!entry.isBlank()) {
                    out.add(Path.of(entry));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }
}
