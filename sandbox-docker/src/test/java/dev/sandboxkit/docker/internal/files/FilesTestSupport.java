package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.ExecRequest;
import dev.sandboxkit.ExecResult;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.Sandbox;
import dev.sandboxkit.SandboxSpec;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/** Helpers for the files-API tests: planting through exec, crafting and reading tar streams, snapshots. */
public final class FilesTestSupport {
    static final String IMAGE = System.getProperty("sandboxkit.test.image", "sandboxkit-test:latest");

    private FilesTestSupport() {
    }

    public static SandboxSpec.Builder spec() {
        return SandboxSpec.builder().image(IMAGE).pullPolicy(PullPolicy.NEVER);
    }

    /** Runs a script inside the sandbox (as the sandbox user) and requires it to succeed. */
    static String plant(Sandbox sandbox, String script) {
        ExecResult r = sandbox.exec(ExecRequest.shell("cd /workspace && " + script).withTimeout(
                java.time.Duration.ofSeconds(30)));
        assertThat(r.exitCode()).as("planting `%s` failed: %s%s", script, r.stdout(), r.stderr()).isZero();
        return r.stdout();
    }

    /** One crafted tar entry. */
    record Entry(byte[] name, byte type, int mode, byte[] content, byte[] link) {
        static Entry file(String name, String content) {
            return new Entry(utf8(name), TarFormat.REGULAR, 0644, utf8(content), null);
        }

        static Entry file(String name, int mode, String content) {
            return new Entry(utf8(name), TarFormat.REGULAR, mode, utf8(content), null);
        }

        static Entry dir(String name, int mode) {
            return new Entry(utf8(name.endsWith("/") ? name : name + "/"), TarFormat.DIRECTORY, mode, new byte[0], null);
        }

        static Entry link(String name, byte type, String target) {
            return new Entry(utf8(name), type, 0777, new byte[0], utf8(target));
        }

        static Entry special(String name, byte type) {
            return new Entry(utf8(name), type, 0644, new byte[0], null);
        }
    }

    /** A tar stream holding exactly these entries, names and types as given (hostile ones included). */
    static byte[] tar(Entry... entries) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Entry e : entries) {
            out.writeBytes(TarFormat.header(e.name(), e.type(), e.mode(), e.content().length, 0, 0, 0, e.link()));
            out.writeBytes(e.content());
            out.writeBytes(new byte[TarFormat.padding(e.content().length)]);
        }
        out.writeBytes(TarFormat.endOfArchive());
        return out.toByteArray();
    }

    static InputStream tarStream(Entry... entries) {
        return new ByteArrayInputStream(tar(entries));
    }

    /** What a downloaded archive holds: name to (type, mode, content). */
    record Read(byte type, int mode, byte[] content) {
        String text() {
            return new String(content, StandardCharsets.UTF_8);
        }
    }

    static Map<String, Read> untar(InputStream in) {
        try (in) {
            Map<String, Read> out = new LinkedHashMap<>();
            TarFormat.Reader r = new TarFormat.Reader(in);
            for (TarFormat.Entry e = r.next(); e != null; e = r.next()) {
                ByteArrayOutputStream content = new ByteArrayOutputStream();
                r.copyContent(Channels.newChannel(content));
                out.put(new String(e.name(), StandardCharsets.UTF_8), new Read(e.type(), e.mode(), content.toByteArray()));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Every entry below {@code dir} (not following links) with its type and, for files, a content hash: taken
     * before and after an attack to show nothing outside the workdir changed.
     */
    static Map<String, String> snapshot(Path dir) {
        return snapshot(dir, null);
    }

    /** {@link #snapshot(Path)} without walking into {@code skip} (a workdir a sandbox may still be changing). */
    static Map<String, String> snapshot(Path dir, Path skip) {
        Map<String, String> out = new TreeMap<>();
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path p, BasicFileAttributes attrs) throws IOException {
                    if (p.equals(skip)) {
                        return FileVisitResult.SKIP_SUBTREE;
                    }
                    record(p);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path p, BasicFileAttributes attrs) throws IOException {
                    record(p);
                    return FileVisitResult.CONTINUE;
                }

                private void record(Path p) throws IOException {
                    String key = dir.relativize(p).toString();
                    if (Files.isSymbolicLink(p)) {
                        out.put(key, "link:" + Files.readSymbolicLink(p));
                    } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                        out.put(key, "file:" + sha256(Files.readAllBytes(p)) + ":"
                                + Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS));
                    } else {
                        out.put(key, "other:" + Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS));
                    }
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    static int mode(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
    }

    static int uid(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    }
}
