package dev.sandboxkit.docker.internal.engine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The JDK-only PEM reader on every key format openssl writes for Docker: each key must sign something its
 * certificate's public key verifies, so a key read "successfully" but wrongly cannot pass.
 */
class PemKeysTest {
    @TempDir
    Path dir;

    @Test
    void pkcs1Rsa() throws Exception {
        Certificates.openssl(dir, "genrsa", "-traditional", "-out", "key.pem", "2048");
        assertThat(Files.readString(dir.resolve("key.pem"))).contains("BEGIN RSA PRIVATE KEY");
        signsForItsCertificate("RSA");
    }

    @Test
    void pkcs8Rsa() throws Exception {
        Certificates.openssl(dir, "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "key.pem");
        assertThat(Files.readString(dir.resolve("key.pem"))).contains("BEGIN PRIVATE KEY");
        signsForItsCertificate("RSA");
    }

    @Test
    void sec1EcWithParametersBlock() throws Exception {
        // `openssl ecparam -genkey` writes an EC PARAMETERS block before the key.
        Certificates.openssl(dir, "ecparam", "-name", "prime256v1", "-genkey", "-out", "key.pem");
        assertThat(Files.readString(dir.resolve("key.pem"))).contains("BEGIN EC PARAMETERS").contains("BEGIN EC PRIVATE KEY");
        signsForItsCertificate("EC");
    }

    @Test
    void sec1EcP384() throws Exception {
        Certificates.openssl(dir, "ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", "key.pem");
        signsForItsCertificate("EC");
    }

    @Test
    void pkcs8Ec() throws Exception {
        Certificates.openssl(dir, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "key.pem");
        assertThat(Files.readString(dir.resolve("key.pem"))).contains("BEGIN PRIVATE KEY");
        signsForItsCertificate("EC");
    }

    @Test
    void pkcs8Ed25519() throws Exception {
        Certificates.openssl(dir, "genpkey", "-algorithm", "ED25519", "-out", "key.pem");
        signsForItsCertificate("EdDSA");
    }

    @Test
    void encryptedKeysAreRefusedWithTheFix() throws Exception {
        Certificates.openssl(dir, "genpkey", "-algorithm", "RSA", "-aes256", "-pass", "pass:secret", "-out", "p8.pem");
        Certificates.openssl(dir, "genrsa", "-traditional", "-aes256", "-passout", "pass:secret", "-out", "p1.pem", "2048");
        for (String f : List.of("p8.pem", "p1.pem")) {
            String pem = Files.readString(dir.resolve(f));
            assertThatThrownBy(() -> PemKeys.privateKey(pem)).as(f).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("encrypted").hasMessageContaining("openssl pkey");
        }
    }

    @Test
    void garbageIsRefused() {
        assertThatThrownBy(() -> PemKeys.privateKey("not a key")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no PEM private key");
        assertThatThrownBy(() -> PemKeys.privateKey("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PemKeys.privateKey("-----BEGIN EC PRIVATE KEY-----\nMAA=\n-----END EC PRIVATE KEY-----\n"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PemKeys.certificates("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PemKeys.certificates("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no PEM certificate");
    }

    @Test
    void certificateChainsKeepTheirOrder() throws Exception {
        Certificates.write(dir);
        String two = Files.readString(dir.resolve("cert.pem")) + Files.readString(dir.resolve("ca.pem"));
        List<X509Certificate> chain = PemKeys.certificates(two);
        assertThat(chain).hasSize(2);
        assertThat(chain.get(0).getSubjectX500Principal().getName()).contains("unit client");
        assertThat(chain.get(1).getSubjectX500Principal().getName()).contains("unit CA");
    }

    /** A self-signed certificate for key.pem, then a signature with the parsed key checked with the certificate. */
    private void signsForItsCertificate(String family) throws Exception {
        Certificates.openssl(dir, "req", "-x509", "-new", "-key", "key.pem", "-out", "cert.pem", "-days", "1",
                "-subj", "/CN=k");
        PrivateKey key = PemKeys.privateKey(Files.readString(dir.resolve("key.pem")));
        X509Certificate cert = PemKeys.certificates(Files.readString(dir.resolve("cert.pem"))).get(0);
        String algorithm = switch (family) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> "Ed25519";
        };
        Signature s = Signature.getInstance(algorithm);
        s.initSign(key);
        s.update("sandboxkit".getBytes());
        byte[] signature = s.sign();
        Signature v = Signature.getInstance(algorithm);
        v.initVerify(cert.getPublicKey());
        v.update("sandboxkit".getBytes());
        assertThat(v.verify(signature)).isTrue();
        // EngineTls takes it too (a key store entry checks that key and certificate belong together).
        Files.copy(dir.resolve("cert.pem"), dir.resolve("ca.pem"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThat(EngineTls.load(dir.resolve("ca.pem"), dir.resolve("cert.pem"), dir.resolve("key.pem")).context())
                .isNotNull();
    }
}
