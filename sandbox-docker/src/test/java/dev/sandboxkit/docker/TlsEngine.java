package dev.sandboxkit.docker;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A second Docker engine for the TLS tests: certificates made by {@code openssl} (a CA, the engine's
 * certificate for {@code 127.0.0.1}/{@code localhost}, a client certificate, and a rogue CA with its own client
 * certificate), then {@code dockerd --tlsverify} on {@code tcp://127.0.0.1:<free port>} with its own data root,
 * exec root (so its own containerd), pid file, config file and a private unix socket, and the test image loaded
 * into it. One per test JVM, started by the first test that asks, stopped and deleted when the JVM exits.
 *
 * <p>Missing {@code dockerd} or {@code openssl} FAILS the tests, as a missing engine does (skipped only with
 * {@code -Dsandboxkit.skipDockerTests=true} outside CI).
 */
final class TlsEngine {
    private static TlsEngine shared;
    private static String problem;

    /** Root of everything: certificates, data and exec roots, log. Short: socket paths must stay under 108 bytes. */
    final Path dir;
    final int port;
    /** The engine's private unix socket, used to load the image and count containers (not by the driver). */
    final Path socket;
    /** A cert directory the driver can use: ca.pem, cert.pem, key.pem (PKCS#1 RSA key). */
    final Path clientDir;
    /** The same CA, a client certificate with an EC (SEC1) key. */
    final Path ecClientDir;
    /** The right CA, but a client certificate signed by a rogue CA: the engine refuses it. */
    final Path rogueClientDir;
    /** A valid client pair, but the rogue CA as trust anchor: the engine's certificate is not trusted. */
    final Path wrongCaDir;
    private Process dockerd;

    private TlsEngine(Path dir, int port) {
        this.dir = dir;
        this.port = port;
        this.socket = dir.resolve("d.sock");
        this.clientDir = dir.resolve("client");
        this.ecClientDir = dir.resolve("client-ec");
        this.rogueClientDir = dir.resolve("client-rogue");
        this.wrongCaDir = dir.resolve("client-wrong-ca");
    }

    /** The shared engine, started on first use; fails (or skips, when allowed) if it cannot be started. */
    static synchronized TlsEngine get() {
        DockerTestSupport.requireEngine(); // the image comes from the main engine
        if (shared == null && problem == null) {
            try {
                TlsEngine e = new TlsEngine(Files.createTempDirectory(Path.of("/tmp"), "sbk-tls-"), freePort());
                Runtime.getRuntime().addShutdownHook(new Thread(e::stop, "tls-engine-stop"));
                e.start();
                shared = e;
            } catch (IOException | RuntimeException e) {
                problem = e.toString();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                problem = e.toString();
            }
        }
        if (problem != null) {
            if (Boolean.getBoolean("sandboxkit.skipDockerTests") && !"true".equals(System.getenv("CI"))) {
                Assumptions.abort("TLS engine tests skipped (-Dsandboxkit.skipDockerTests=true): " + problem);
            }
            Assertions.fail("the TLS test engine (a second dockerd with --tlsverify) could not be started: " + problem
                    + ". It needs dockerd and openssl (scripts/setup-env.sh installs them) and root.");
        }
        return shared;
    }

    /** {@code tcp://127.0.0.1:<port>}. */
    String host() {
        return "tcp://127.0.0.1:" + port;
    }

    /** Driver properties for this engine with the given cert directory. */
    Map<String, String> properties(Path certDir) {
        Map<String, String> p = new HashMap<>();
        p.put("docker.host", host());
        p.put("docker.tlsVerify", "true");
        p.put("docker.certPath", certDir.toString());
        return p;
    }

    /** The docker CLI against the engine's private socket. */
    String cli(String... args) {
        return DockerTestSupport.dockerAt("unix://" + socket, args);
    }

    private void start() throws IOException, InterruptedException {
        makeCertificates();
        Files.writeString(dir.resolve("daemon.json"), "{}"); // not /etc/docker/daemon.json: nothing of the main engine's
        Path log = dir.resolve("dockerd.log");
        List<String> cmd = List.of("dockerd", "--config-file", dir.resolve("daemon.json").toString(),
                "--data-root", dir.resolve("data").toString(), "--exec-root", dir.resolve("exec").toString(),
                "--pidfile", dir.resolve("dockerd.pid").toString(), "-H", "unix://" + socket, "-H", host(),
                "--tlsverify", "--tlscacert", dir.resolve("ca/ca.pem").toString(),
                "--tlscert", dir.resolve("server/cert.pem").toString(), "--tlskey", dir.resolve("server/key.pem").toString(),
                "--bridge=none", "--iptables=false", "--ip-masq=false");
        // Without --containerd it starts a containerd of its own under the exec root: nothing shared with the main engine.
        dockerd = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            if (!dockerd.isAlive()) {
                throw new IllegalStateException("dockerd exited with " + dockerd.exitValue() + ": " + tail(log));
            }
            if (Files.exists(socket) && run(List.of("docker", "-H", "unix://" + socket, "version")) == 0) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("dockerd did not answer within 60 s: " + tail(log));
            }
            Thread.sleep(100);
        }
        int loaded = run(List.of("sh", "-c", "docker save " + DockerTestSupport.IMAGE + " | docker -H unix://" + socket
                + " load -q"));
        if (loaded != 0) {
            throw new IllegalStateException("could not load " + DockerTestSupport.IMAGE + " into the TLS engine");
        }
    }

    /** Stops the engine (its containers and containerd with it) and deletes its directory. */
    synchronized void stop() {
        if (dockerd != null && dockerd.isAlive()) {
            try {
                // Ours only: remove what the tests left, then SIGTERM; dockerd unmounts and stops its containerd.
                run(List.of("sh", "-c", "ids=$(docker -H unix://" + socket + " ps -aq); [ -z \"$ids\" ] || docker -H unix://"
                        + socket + " rm -f $ids"));
                dockerd.destroy();
                if (!dockerd.waitFor(30, TimeUnit.SECONDS)) {
                    dockerd.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (IOException e) {
                System.err.println("TLS engine cleanup: " + e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            // --one-file-system: should a mount survive dockerd, its contents stay untouched.
            run(List.of("rm", "-rf", "--one-file-system", dir.toString()));
        } catch (IOException | InterruptedException e) {
            System.err.println("TLS engine cleanup: " + e);
        }
    }

    private void makeCertificates() throws IOException, InterruptedException {
        for (String d : List.of("ca", "rogue", "server", "client", "client-ec", "client-rogue", "client-wrong-ca")) {
            Files.createDirectories(dir.resolve(d));
        }
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca/key.pem", "-out", "ca/ca.pem",
                "-days", "2", "-subj", "/CN=sandboxkit test CA");
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "rogue/key.pem", "-out", "rogue/ca.pem",
                "-days", "2", "-subj", "/CN=rogue CA");
        Files.writeString(dir.resolve("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                + "extendedKeyUsage=serverAuth\n");
        Files.writeString(dir.resolve("client.ext"), "extendedKeyUsage=clientAuth\n");
        // The engine: PKCS#8 RSA (openssl's default).
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "server/key.pem");
        sign("server", "ca", "server.ext", "/CN=localhost");
        // Clients: PKCS#1 RSA, SEC1 EC, and one signed by the rogue CA.
        openssl("genrsa", "-traditional", "-out", "client/key.pem", "2048");
        sign("client", "ca", "client.ext", "/CN=client");
        openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "client-ec/key.pem");
        sign("client-ec", "ca", "client.ext", "/CN=client-ec");
        openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "client-rogue/key.pem");
        sign("client-rogue", "rogue", "client.ext", "/CN=rogue client");
        for (String d : List.of("client", "client-ec", "client-rogue")) {
            Files.copy(dir.resolve("ca/ca.pem"), dir.resolve(d).resolve("ca.pem"));
        }
        Files.copy(dir.resolve("rogue/ca.pem"), wrongCaDir.resolve("ca.pem"));
        Files.copy(clientDir.resolve("cert.pem"), wrongCaDir.resolve("cert.pem"));
        Files.copy(clientDir.resolve("key.pem"), wrongCaDir.resolve("key.pem"));
    }

    /** {@code <d>/cert.pem} for {@code <d>/key.pem}, signed by {@code <ca>/ca.pem}. */
    private void sign(String d, String ca, String ext, String subject) throws IOException, InterruptedException {
        openssl("req", "-new", "-key", d + "/key.pem", "-out", d + "/req.csr", "-subj", subject);
        openssl("x509", "-req", "-in", d + "/req.csr", "-CA", ca + "/ca.pem", "-CAkey", ca + "/key.pem",
                "-CAcreateserial", "-out", d + "/cert.pem", "-days", "2", "-extfile", ext);
    }

    private void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException(cmd + " failed: " + out);
        }
    }

    private static int run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 10), lines.size()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
