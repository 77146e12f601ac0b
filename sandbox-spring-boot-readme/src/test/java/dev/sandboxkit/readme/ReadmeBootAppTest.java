package dev.sandboxkit.readme;

import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.Test;
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
 * The README's Spring Boot section, followed literally: its dependencies and BOM imports are this module's, its
 * properties and {@code Assistant} are this application's, and the application starts in a child JVM on exactly
 * that class path, a stand-in ChatModel bean in place of an LLM, and has two conversations in two sandboxes.
 */
class ReadmeBootAppTest {
    private static final Path README = Path.of(System.getProperty("sandboxkit.readme.file"));
    private static final Path POM = Path.of(System.getProperty("sandboxkit.readme.pom"));
    /** What a Boot application's parent manages anyway, and JUnit for this module's own tests. */
    private static final Set<String> NOT_IN_README = Set.of("org.springframework.boot:spring-boot-dependencies",
            "org.junit:junit-bom");
    private static final Pattern BLOCK = Pattern.compile("(?m)^```(\\w+)\\n(.*?)^```$", Pattern.DOTALL);

    @TempDir
    Path root;

    @Test
    void theReadmesDependenciesAndBomsAreTheApplications() throws Exception {
        Element readme = xml("<readme>" + block(bootSection(), "xml") + "</readme>");
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

    @Test
    void theReadmesPropertiesAndAssistantAreTheApplications() throws Exception {
        String section = bootSection();
        Path main = POM.resolveSibling("src").resolve("main");
        assertThat(block(section, "properties"))
                .isEqualTo(Files.readString(main.resolve("resources/application.properties"), StandardCharsets.UTF_8));
        assertThat(Files.readString(main.resolve("java/dev/sandboxkit/readme/Assistant.java"), StandardCharsets.UTF_8))
                .contains(block(section, "java"));
    }

    @Test
    void everySandboxkitDependencyInTheReadmeHasAVersionOrItsBom() throws Exception {
        Matcher m = BLOCK.matcher(Files.readString(README, StandardCharsets.UTF_8));
        int checked = 0;
        while (m.find()) {
            if (!m.group(1).equals("xml") || !m.group(2).contains("<groupId>dev.sandboxkit</groupId>")) {
                continue;
            }
            Element snippet = xml("<readme>" + m.group(2) + "</readme>");
            boolean bom = m.group(2).contains("<artifactId>sandbox-bom</artifactId>");
            List<Element> all = new ArrayList<>(dependencies(snippet)); // <dependencies> ... or a lone <dependency>
            Element lone = child(snippet, "dependency");
            if (lone != null) {
                all.add(lone);
            }
            for (Element d : all) {
                if (text(d, "groupId").equals("dev.sandboxkit")) {
                    assertThat(bom || text(d, "version") != null).as("version or BOM for %s", text(d, "artifactId"))
                            .isTrue();
                    checked++;
                }
            }
        }
        assertThat(checked).isGreaterThanOrEqualTo(4); // quickstart, LangChain4j, Spring Boot, Kubernetes
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

    /** From the Spring Boot section's heading to the next section of the same level. */
    private static String bootSection() throws Exception {
        String readme = Files.readString(README, StandardCharsets.UTF_8);
        int start = readme.indexOf("\n## Use with Spring AI / Spring Boot");
        assertThat(start).as("the README's Spring Boot section").isPositive();
        int end = readme.indexOf("\n## ", start + 1);
        return readme.substring(start, end < 0 ? readme.length() : end);
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
