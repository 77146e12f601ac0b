package dev.sandboxkit.readme;

import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Spring Boot quickstart, in the README and on docs/spring-boot.md, followed literally: its dependencies and BOM
 * imports are this module's, its properties and {@code Assistant} are this application's, and the application starts
 * in a child JVM on exactly that class path, a stand-in ChatModel bean in place of an LLM, and has two conversations in
 * two sandboxes. (That every Maven snippet of the documentation names a version or the BOM, and that every Java
 * snippet compiles, is DocSnippetsTest's, in the examples.)
 */
class ReadmeBootAppTest {
    private static final Path README = Path.of(System.getProperty("sandboxkit.readme.file"));
    private static final Path BOOT_PAGE = README.resolveSibling("docs").resolve("spring-boot.md");
    private static final Path POM = Path.of(System.getProperty("sandboxkit.readme.pom"));
    /** What a Boot application's parent manages anyway, and JUnit for this module's own tests. */
    private static final Set<String> NOT_IN_README = Set.of("org.springframework.boot:spring-boot-dependencies",
            "org.junit:junit-bom");
    private static final Pattern BLOCK = Pattern.compile("(?m)^```(\\w+)\\n(.*?)^```$", Pattern.DOTALL);

    @TempDir
    Path root;

    @ParameterizedTest
    @ValueSource(strings = {"README", "docs/spring-boot.md"})
    void theQuickstartsDependenciesAndBomsAreTheApplications(String where) throws Exception {
        Element readme = xml("<readme>" + block(bootSection(where), "xml") + "</readme>");
        Element pom = xml(Files.readString(POM, StandardCharsets.UTF_8));
        Element rootPom = xml(Files.readString(README.resolveSibling("pom.xml"), StandardCharsets.UTF_8));

        Set<String> pomImports = new LinkedHashSet<>();
        for (Element d : dependencies(child(pom, "dependencyManagement"))) {
            String id = text(d, "groupId") + ":" + text(d, "artifactId");
            if (!NOT_IN_README.contains(id)) {
                pomImports.add(id + ":" + resolve(text(d, "version"), pom, rootPom));
            }
        }
        Set<String> readmeImports = new LinkedHashSet<>();
        for (Element d : dependencies(child(readme, "dependencyManagement"))) {
            assertThat(text(d, "type") + " " + text(d, "scope")).isEqualTo("pom import");
            readmeImports.add(text(d, "groupId") + ":" + text(d, "artifactId") + ":" + text(d, "version"));
        }
        assertThat(readmeImports).containsExactlyElementsOf(pomImports);

        List<String> pomDependencies = new ArrayList<>();
        for (Element d : dependencies(pom)) {
            if (!"test".equals(text(d, "scope"))) {
                pomDependencies.add(text(d, "groupId") + ":" + text(d, "artifactId"));
            }
        }
        List<String> readmeDependencies = new ArrayList<>();
        for (Element d : dependencies(readme)) {
            assertThat(text(d, "version")).as("versions come from the BOMs").isNull();
            readmeDependencies.add(text(d, "groupId") + ":" + text(d, "artifactId"));
        }
        assertThat(readmeDependencies).containsExactlyElementsOf(pomDependencies);
    }

    @ParameterizedTest
    @ValueSource(strings = {"README", "docs/spring-boot.md"})
    void theQuickstartsPropertiesAndAssistantAreTheApplications(String where) throws Exception {
        String section = bootSection(where);
        Path main = POM.resolveSibling("src").resolve("main");
        assertThat(block(section, "properties"))
                .isEqualTo(Files.readString(main.resolve("resources/application.properties"), StandardCharsets.UTF_8));
        assertThat(Files.readString(main.resolve("java/dev/sandboxkit/readme/Assistant.java"), StandardCharsets.UTF_8))
                .contains(block(section, "java"));
    }

    @Test
    void theReadmesApplicationStartsAndKeepsTwoConversationsApart() throws Exception {
        List<String> args = ChildJvm.baseArgs(root);
        String fleet = args.stream().filter(a -> a.startsWith("--sandboxkit.fleet=")).findFirst().orElseThrow()
                .substring("--sandboxkit.fleet=".length());

        ChildJvm.Run run = ChildJvm.run("sandboxkit.readme.appClasspath", "dev.sandboxkit.readme.ReadmeApplication", args);

        assertThat(run.exitCode()).as(run.output()).isZero();
        assertThat(run.output()).contains("Started ReadmeApplication");
        assertThat(run.output().lines().filter(l -> l.matches("(alice|bob|assistant)> .*"))) // between log lines
                .containsExactly("alice> remember the build is green",
                        "assistant> The sandbox answered: Wrote 18 bytes (1 line) to /workspace/memory.txt (new file).",
                        "bob> recall",
                        "assistant> The sandbox answered: No such file or directory: /workspace/memory.txt. Use list_files "
                                + "to see what exists.",
                        "alice> recall",
                        "assistant> The sandbox answered: the build is green");
        assertThat(docker("ps", "-a", "-q", "--filter", "label=" + SandboxLabels.FLEET + "=" + fleet))
                .as("containers left by the closed application").isBlank();
    }

    /** The Spring Boot quickstart: the README's "### Spring Boot", or the page's "## Quickstart", to the next heading. */
    private static String bootSection(String where) throws Exception {
        boolean readme = where.equals("README");
        String text = Files.readString(readme ? README : BOOT_PAGE, StandardCharsets.UTF_8);
        String heading = readme ? "\n### Spring Boot\n" : "\n## Quickstart\n";
        int start = text.indexOf(heading);
        assertThat(start).as("the Spring Boot quickstart in %s", where).isPositive();
        Matcher next = Pattern.compile("(?m)^#{2,3} ").matcher(text);
        int end = next.find(start + heading.length()) ? next.start() : text.length();
        return text.substring(start, end);
    }

    /** The first code block of a language in a text. */
    private static String block(String text, String language) {
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(language)) {
                return m.group(2);
            }
        }
        throw new AssertionError("no ```" + language + " block");
    }

    private static Element xml(String text) throws Exception {
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
        return doc.getDocumentElement();
    }

    /** The {@code dependency} elements of a {@code dependencies} child, or none. */
    private static List<Element> dependencies(Element parent) {
        List<Element> out = new ArrayList<>();
        Element deps = parent == null ? null : child(parent, "dependencies");
        if (deps != null) {
            for (Node n = deps.getFirstChild(); n != null; n = n.getNextSibling()) {
                if (n instanceof Element e && e.getTagName().equals("dependency")) {
                    out.add(e);
                }
            }
        }
        return out;
    }

    private static Element child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e;
            }
        }
        return null;
    }

    private static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? null : e.getTextContent().trim();
    }

    /** ${project.version} from the parent, other ${...} from the root pom's properties. */
    private static String resolve(String value, Element pom, Element rootPom) {
        if (value.equals("${project.version}")) {
            return text(child(pom, "parent"), "version");
        }
        if (value.startsWith("${")) {
            return text(child(rootPom, "properties"), value.substring(2, value.length() - 1));
        }
        return value;
    }

    private static String docker(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("docker"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("docker %s: %s", args, out).isZero();
        return out.trim();
    }
}
