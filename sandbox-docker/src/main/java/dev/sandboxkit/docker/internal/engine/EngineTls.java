package dev.sandboxkit.docker.internal.engine;

import dev.sandboxkit.docker.DockerTlsException;

import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Locale;

/**
 * The TLS material for one engine, loaded once: the CA that must have signed the engine's certificate, and
 * optionally this client's certificate and key (what {@code docker --tlsverify} uses). The engine's certificate
 * is always verified, host name included; there is no "skip verify" mode.
 */
public final class EngineTls {
    private final Path ca;
    private final Path cert;
    private final Path key;
    private final SSLContext context;

    private EngineTls(Path ca, Path cert, Path key, SSLContext context) {
        this.ca = ca;
        this.cert = cert;
        this.key = key;
        this.context = context;
    }

    /**
     * Loads the files.
     *
     * @param ca   PEM CA certificate(s) the engine's certificate must chain to
     * @param cert PEM client certificate (chain), or {@code null} for none
     * @param key  PEM private key of {@code cert}, or {@code null} for none
     * @return the material
     * @throws DockerTlsException ({@link DockerTlsException.Reason#BAD_MATERIAL}) if a file is missing or unusable
     */
    public static EngineTls load(Path ca, Path cert, Path key) {
        if ((cert == null) != (key == null)) {
            throw bad("a client certificate needs its key and a key its certificate (got " + (cert != null ? "cert "
                    + cert : "key " + key) + " only)", null);
        }
        try {
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            List<X509Certificate> cas = PemKeys.certificates(read(ca, "CA certificate"));
            for (int i = 0; i < cas.size(); i++) {
                trust.setCertificateEntry("ca-" + i, cas.get(i));
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            KeyManager[] keyManagers = null;
            if (cert != null) {
                List<X509Certificate> chain = PemKeys.certificates(read(cert, "client certificate"));
                PrivateKey privateKey;
                try {
                    privateKey = PemKeys.privateKey(read(key, "client key"));
                } catch (IllegalArgumentException e) {
                    throw bad("client key " + key + ": " + e.getMessage(), e);
                }
                KeyStore keys = KeyStore.getInstance("PKCS12");
                keys.load(null, null);
                keys.setKeyEntry("client", privateKey, new char[0], chain.toArray(new X509Certificate[0]));
                KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(keys, new char[0]);
                keyManagers = kmf.getKeyManagers();
            }
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers, tmf.getTrustManagers(), null);
            return new EngineTls(ca, cert, key, context);
        } catch (IllegalArgumentException e) {
            throw bad("TLS material (CA " + ca + (cert == null ? "" : ", cert " + cert) + "): " + e.getMessage(), e);
        } catch (GeneralSecurityException | IOException e) {
            throw bad("cannot use the TLS material (CA " + ca + (cert == null ? "" : ", cert " + cert + ", key "
                    + key) + "): " + e.getMessage(), e);
        }
    }

    /**
     * The context for every connection to this engine (every call of the driver's engine client).
     *
     * @return the SSL context
     */
    public SSLContext context() {
        return context;
    }

    /** A client engine that verifies the peer's certificate and that it names {@code host}. */
    SSLEngine newEngine(String host, int port) {
        SSLEngine engine = context.createSSLEngine(host, port);
        engine.setUseClientMode(true);
        SSLParameters parameters = engine.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        engine.setSSLParameters(parameters);
        return engine;
    }

    /**
     * Whether a failure is a TLS one, anywhere in its causes.
     *
     * @param failure what a connection threw
     * @return the SSL exception, or {@code null}
     */
    public static SSLException sslCause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SSLException ssl) {
                return ssl;
            }
        }
        return null;
    }

    /**
     * The typed error for a TLS failure talking to {@code engine}: which side refused, said plainly.
     *
     * @param engine  the engine's address, for the message
     * @param failure the SSL exception (or one that has it as a cause)
     * @return the exception to throw
     */
    public static DockerTlsException failure(String engine, Throwable failure) {
        SSLException ssl = sslCause(failure);
        Throwable cause = ssl == null ? failure : ssl;
        String text = String.valueOf(cause.getMessage()).toLowerCase(Locale.ROOT);
        boolean certificateProblem = false;
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            certificateProblem |= t instanceof CertificateException || t instanceof java.security.cert.CertPathValidatorException;
        }
        if (certificateProblem || text.contains("pkix") || text.contains("subject alternative")
                || text.contains("no name matching")) {
            return new DockerTlsException(DockerTlsException.Reason.ENGINE_NOT_TRUSTED, "the Docker engine at "
                    + engine + " presented a certificate that is not trusted (not signed by the configured CA, "
                    + "expired, or not naming the host): " + cause.getMessage(), failure);
        }
        if (text.contains("bad_certificate") || text.contains("certificate_required") || text.contains("unknown_ca")
                || text.contains("certificate_unknown") || text.contains("access_denied")) {
            return new DockerTlsException(DockerTlsException.Reason.CLIENT_REJECTED, "the Docker engine at " + engine
                    + " refused this client's certificate (missing, or not signed by the CA the engine trusts "
                    + "with --tlscacert): " + cause.getMessage(), failure);
        }
        return new DockerTlsException(DockerTlsException.Reason.HANDSHAKE_FAILED, "TLS with the Docker engine at "
                + engine + " failed: " + cause.getMessage()
                + (cause instanceof SSLHandshakeException ? "" : " (is it a TLS endpoint?)"), failure);
    }

    private static String read(Path file, String what) {
        try {
            return Files.readString(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw bad("cannot read the " + what + " " + file + ": " + e, e);
        }
    }

    private static DockerTlsException bad(String message, Throwable cause) {
        return new DockerTlsException(DockerTlsException.Reason.BAD_MATERIAL, message, cause);
    }

    @Override
    public String toString() {
        return "TLS(ca=" + ca + (cert == null ? "" : ", cert=" + cert + ", key=" + key) + ")";
    }
}
