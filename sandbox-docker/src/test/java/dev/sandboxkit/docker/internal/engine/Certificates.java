package dev.sandboxkit.docker.internal.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Test certificates made with the {@code openssl} CLI (scripts/setup-env.sh installs it). */
public final class Certificates {
    private Certificates() {
    }

    /** A self-signed {@code ca.pem} and a {@code cert.pem}/{@code key.pem} pair it signed, in {@code dir}. */
    public static Path write(Path dir) throws IOException, InterruptedException {
        openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca-key.pem", "-out", "ca.pem",
                "-days", "1", "-subj", "/CN=unit CA");
        openssl(dir, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "key.pem");
        openssl(dir, "req", "-new", "-key", "key.pem", "-out", "req.csr", "-subj", "/CN=unit client");
        openssl(dir, "x509", "-req", "-in", "req.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
                "-out", "cert.pem", "-days", "1");
        return dir;
    }

    /** Runs openssl in {@code dir}; returns its output. */
    public static String openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException(cmd + " failed: " + out);
        }
        return out;
    }
}
