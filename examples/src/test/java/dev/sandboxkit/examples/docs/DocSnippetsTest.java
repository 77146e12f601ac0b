package dev.sandboxkit.examples.docs;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxManager;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.examples.docs.Markdown.Block;
import dev.sandboxkit.examples.docs.Snippets.Unit;
import dev.sandboxkit.spi.SandboxLabels;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * The documentation cannot drift from the code: every Java snippet of README.md and docs/ compiles against the
 * published modules, the main ones run on the real Docker engine (the documented values they print are asserted),
 * every Maven snippet that adds a sandboxkit module names its version or the BOM, every JSON snippet parses, and every
 * {@code sandboxkit.*} property of a properties snippet exists. How to write a snippet: docs/README.md, "Writing
 * snippets".
 */
class DocSnippetsTest {
    private static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");
    /** The compiled snippets, and a workspace root per run (JUnit deletes it after the class). */
    @TempDir
    static Path work;
    private static List<Unit> units;
    private static List<String> errors;

    /** Generates and compiles every snippet once; the tests share the result. */
    private static synchronized List<Unit> compiled() {
        if (units == null) {
            units = Snippets.units(Markdown.blocks(), IMAGE);
            errors = Snippets.compile(units, Snippets.classpath(), work.resolve("classes"));
        }
        return units;
    }

    @Test
    void everyJavaSnippetCompiles() {
        List<Unit> all = compiled();

        assertThat(errors).as("snippets that do not compile (file:line of the documentation)").isEmpty();
        assertThat(all.stream().filter(u -> !u.forRun()).count()).as("java snippets found").isGreaterThanOrEqualTo(25);
    }

    /** One test per block marked {@code <!-- snippet: run -->}; identical blocks (the README's and a page's) run once. */
    @TestFactory
    Stream<DynamicTest> theMainSnippetsRun() {
        Map<String, List<Unit>> byCode = new LinkedHashMap<>();
        for (Unit unit : compiled()) {
            if (unit.forRun()) {
                byCode.computeIfAbsent(unit.block().directive() + "\n" + unit.block().text(), k -> new ArrayList<>())
                        .add(unit);
            }
        }
        List<String> where = byCode.values().stream().flatMap(List::stream).map(u -> u.block().where()).toList();
        assertThat(where).as("snippets marked to run").hasSizeGreaterThanOrEqualTo(4)
                .anyMatch(w -> w.startsWith("README.md:"));
        return byCode.values().stream().map(same -> DynamicTest.dynamicTest(
                same.stream().map(u -> u.block().where()).reduce((a, b) -> a + " = " + b).orElseThrow(),
                () -> run(same.get(0))));
    }

    private static void run(Unit unit) throws Exception {
        assertThat(errors.stream().filter(e -> e.startsWith(unit.block().page().name() + ":")))
                .as("compile errors on this page").isEmpty();
        Path root = Files.createTempDirectory(work, "run");
        String fleet = "docs-" + UUID.randomUUID().toString().substring(0, 8);
        System.setProperty(Snippets.ROOT_PROPERTY, root.resolve("own").toString());
        try (URLClassLoader loader = new URLClassLoader(new URL[]{work.resolve("classes").toUri().toURL()},
                DocSnippetsTest.class.getClassLoader())) {
            Class<?> type = loader.loadClass(unit.pkg() + "." + unit.className());
            if (unit.statements()) {
                runStatements(type, root.resolve("fixture"), fleet);
            } else {
                runTestClass(type);
            }
        } finally {
            System.clearProperty(Snippets.ROOT_PROPERTY);
            assertThat(docker("ps", "-a", "-q", "--filter", "label=" + SandboxLabels.FLEET + "=" + fleet))
                    .as("containers left by the snippet's manager").isBlank();
            assertThat(docker("ps", "-a", "--no-trunc", "--format", "{{.Mounts}}", "--filter",
                    "label=" + SandboxLabels.MANAGED + "=true")).as("containers left on the snippet's workdirs")
                    .doesNotContain(root.toString());
        }
    }

    /** A block of statements: its context fields get a manager on the test engine, its spec and the session chat-42. */
    private static void runStatements(Class<?> type, Path workspaceRoot, String fleet) throws Exception {
        Object snippet = type.getConstructor().newInstance();
        SandboxManager manager = null;
        try {
            SandboxSpec spec = SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER).build();
            for (Field field : type.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers())) {
                    continue;
                }
                if (manager == null && Set.of(SandboxManager.class, Sandbox.class).contains(field.getType())) {
                    manager = SandboxManager.builder().driver("docker").workspaceRoot(workspaceRoot).fleet(fleet).build();
                }
                field.setAccessible(true);
                if (field.getType() == SandboxManager.class) {
                    field.set(snippet, manager);
                } else if (field.getType() == SandboxSpec.class) {
                    field.set(snippet, spec);
                } else if (field.getType() == Sandbox.class) {
                    field.set(snippet, manager.acquire("chat-42", spec));
                } else {
                    throw new AssertionError("a snippet that runs gets a SandboxManager, a SandboxSpec and a Sandbox "
                            + "from the test; its context also declares " + field);
                }
            }
            try {
                type.getMethod("run").invoke(snippet);
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof Exception ex) {
                    throw ex;
                }
                if (e.getCause() instanceof Error err) {
                    throw err;
                }
                throw e;
            }
        } finally {
            if (manager != null) {
                manager.close();
            }
        }
    }

    /** A block that declares a JUnit test class: it runs as one, with JUnit's own engine. */
    private static void runTestClass(Class<?> type) {
        Events tests = EngineTestKit.engine("junit-jupiter").selectors(selectClass(type)).execute().testEvents();
        List<Throwable> failures = new ArrayList<>();
        tests.failed().stream().forEach(e -> e.getPayload(org.junit.platform.engine.TestExecutionResult.class)
                .flatMap(org.junit.platform.engine.TestExecutionResult::getThrowable).ifPresent(failures::add));
        assertThat(failures).as("failures of the documented test class").isEmpty();
        assertThat(tests.succeeded().count()).as("tests that passed").isPositive();
        assertThat(tests.skipped().count() + tests.aborted().count()).as("tests skipped or aborted").isZero();
    }

    @Test
    void everySandboxkitDependencyNamesAVersionOrTheBom() throws Exception {
        int checked = 0;
        for (Block block : Markdown.blocks()) {
            if (!block.language().equals("xml") || !block.text().contains("<groupId>dev.sandboxkit</groupId>")) {
                continue;
            }
            Element snippet = xml("<snippet>" + block.text() + "</snippet>");
            boolean bom = block.text().contains("sandbox-bom");
            NodeList dependencies = snippet.getElementsByTagName("dependency");
            for (int i = 0; i < dependencies.getLength(); i++) {
                Element d = (Element) dependencies.item(i);
                if (text(d, "groupId").equals("dev.sandboxkit")) {
                    assertThat(bom || !text(d, "version").isEmpty())
                            .as("%s: %s names no <version> and does not say that sandbox-bom manages it", block.where(),
                                    text(d, "artifactId")).isTrue();
                    checked++;
                }
            }
        }
        assertThat(checked).as("sandboxkit dependencies in Maven snippets").isGreaterThanOrEqualTo(12);
    }

    @Test
    void jsonSnippetsAreJson() throws Exception {
        ObjectMapper json = new ObjectMapper();
        int checked = 0;
        for (Block block : Markdown.blocks()) {
            if (block.language().equals("json")) {
                try {
                    JsonNode node = json.readTree(block.text());
                    assertThat(node.isObject()).as("%s is a JSON object", block.where()).isTrue();
                } catch (IOException e) {
                    throw new AssertionError(block.where() + ": not JSON: " + e.getMessage(), e);
                }
                checked++;
            }
        }
        assertThat(checked).as("JSON snippets").isGreaterThanOrEqualTo(4);
    }

    @Test
    void propertiesSnippetsNameRealProperties() throws Exception {
        Set<String> known = new TreeSet<>();
        ObjectMapper json = new ObjectMapper();
        Enumeration<URL> metadata = getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json");
        while (metadata.hasMoreElements()) {
            try (InputStream in = metadata.nextElement().openStream()) {
                json.readTree(in).path("properties").forEach(p -> known.add(p.path("name").asText()));
            }
        }
        assertThat(known).as("the starter's property metadata").contains("sandboxkit.spec.image");
        int checked = 0;
        for (Block block : Markdown.blocks()) {
            if (!block.language().equals("properties")) {
                continue;
            }
            for (int i = 0; i < block.code().size(); i++) {
                String line = block.code().get(i).strip();
                if (line.isEmpty() || line.startsWith("#") || !line.startsWith("sandboxkit.")) {
                    continue;
                }
                String key = line.split("[=:]", 2)[0].strip();
                // A map property (sandboxkit.spec.env.NAME) is known by its prefix.
                boolean isKnown = known.contains(key) || known.stream().anyMatch(k -> key.startsWith(k + "."));
                assertThat(isKnown).as("%s:%d: %s is not a sandboxkit property", block.page().name(),
                        block.firstLine() + i, key).isTrue();
                checked++;
            }
        }
        assertThat(checked).as("sandboxkit properties in snippets").isGreaterThanOrEqualTo(2);
    }

    private static Element xml(String text) throws Exception {
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
        return doc.getDocumentElement();
    }

    /** The text of a direct child element, empty if there is none. */
    private static String text(Element parent, String name) {
        for (org.w3c.dom.Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(name)) {
                return e.getTextContent().strip();
            }
        }
        return "";
    }

    private static String docker(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("docker"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("docker %s finished", args).isTrue();
        assertThat(p.exitValue()).as("docker %s: %s", args, out).isZero();
        return out.trim();
    }
}
