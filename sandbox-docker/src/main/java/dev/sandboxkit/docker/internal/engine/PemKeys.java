package dev.sandboxkit.docker.internal.engine;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM certificates and private keys with the JDK alone (docker-java would need BouncyCastle for this): X.509
 * certificates, and unencrypted keys as PKCS#8 ({@code PRIVATE KEY}: RSA, EC, Ed25519), PKCS#1
 * ({@code RSA PRIVATE KEY}) or SEC1 ({@code EC PRIVATE KEY}). The latter two are wrapped into PKCS#8 with a
 * few bytes of DER, which is all the JDK's key factories lack.
 */
final class PemKeys {
    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);
    /** AlgorithmIdentifier rsaEncryption (1.2.840.113549.1.1.1) with NULL parameters. */
    private static final byte[] RSA_ALGORITHM = hex("300d06092a864886f70d0101010500");
    /** OID id-ecPublicKey (1.2.840.10045.2.1). */
    private static final byte[] EC_PUBLIC_KEY_OID = hex("06072a8648ce3d0201");

    private PemKeys() {
    }

    /**
     * Every certificate in a PEM text, in order.
     *
     * @throws IllegalArgumentException if there is none, or one does not parse
     */
    static List<X509Certificate> certificates(String pem) {
        List<X509Certificate> out = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (Block b : blocks(pem)) {
                if (b.type.equals("CERTIFICATE")) {
                    out.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(b.der)));
                }
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException("a certificate does not parse: " + e.getMessage(), e);
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException("no PEM certificate (-----BEGIN CERTIFICATE-----) in it");
        }
        return out;
    }

    /**
     * The first private key in a PEM text.
     *
     * @throws IllegalArgumentException if there is none, it is encrypted, or it does not parse
     */
    static PrivateKey privateKey(String pem) {
        if (pem.contains("Proc-Type: 4,ENCRYPTED")) {
            throw new IllegalArgumentException("the key is encrypted; give it unencrypted (openssl pkey -in k -out k2)");
        }
        for (Block b : blocks(pem)) {
            switch (b.type) {
                case "PRIVATE KEY":
                    return pkcs8(b.der);
                case "RSA PRIVATE KEY":
                    return generate("RSA", pkcs8Wrap(RSA_ALGORITHM, b.der));
                case "EC PRIVATE KEY":
                    return generate("EC", pkcs8Wrap(ecAlgorithm(b.der), b.der));
                case "ENCRYPTED PRIVATE KEY":
                    throw new IllegalArgumentException("the key is encrypted; give it unencrypted "
                            + "(openssl pkey -in k -out k2)");
                default:
                    // EC PARAMETERS and other blocks before the key
            }
        }
        throw new IllegalArgumentException("no PEM private key (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY) in it");
    }

    /** A PKCS#8 key of whichever algorithm its AlgorithmIdentifier names. */
    private static PrivateKey pkcs8(byte[] der) {
        IllegalArgumentException last = null;
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS")) {
            try {
                return generate(algorithm, der);
            } catch (IllegalArgumentException e) {
                last = e; // not this algorithm: the factory checks the identifier
            }
        }
        throw new IllegalArgumentException("the PKCS#8 key is not RSA, EC or EdDSA, or is malformed", last);
    }

    private static PrivateKey generate(String algorithm, byte[] pkcs8) {
        try {
            return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(pkcs8));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not a valid " + algorithm + " key: " + e.getMessage(), e);
        }
    }

    /** {@code PrivateKeyInfo ::= SEQUENCE { INTEGER 0, AlgorithmIdentifier, OCTET STRING key }}. */
    static byte[] pkcs8Wrap(byte[] algorithm, byte[] key) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {0x02, 0x01, 0x00});
        body.writeBytes(algorithm);
        body.writeBytes(tlv(0x04, key));
        return tlv(0x30, body.toByteArray());
    }

    /**
     * The AlgorithmIdentifier for a SEC1 key: id-ecPublicKey with the named curve found in the key's
     * {@code [0]} parameters ({@code ECPrivateKey ::= SEQUENCE { version, privateKey, [0] parameters, [1] key }}).
     */
    private static byte[] ecAlgorithm(byte[] sec1) {
        Der seq = new Der(sec1, 0, sec1.length).next(0x30);
        Der fields = seq.inside();
        fields.next(0x02); // version
        fields.next(0x04); // the private key
        while (fields.hasMore()) {
            Der field = fields.nextAny();
            if (field.tag == 0xa0) {
                Der curve = field.inside().next(0x06);
                ByteArrayOutputStream algorithm = new ByteArrayOutputStream();
                algorithm.writeBytes(EC_PUBLIC_KEY_OID);
                algorithm.writeBytes(curve.encoded());
                return tlv(0x30, algorithm.toByteArray());
            }
        }
        throw new IllegalArgumentException("the EC key names no curve (no [0] parameters); convert it to PKCS#8 "
                + "(openssl pkcs8 -topk8 -nocrypt)");
    }

    private static byte[] tlv(int tag, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 6);
        out.write(tag);
        int n = value.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(n >>> (8 * i));
            }
        }
        out.writeBytes(value);
        return out.toByteArray();
    }

    private static List<Block> blocks(String pem) {
        List<Block> out = new ArrayList<>();
        Matcher m = BLOCK.matcher(pem);
        while (m.find()) {
            String body = m.group(2);
            if (body.contains(":")) {
                // RFC 1421 headers (Proc-Type, DEK-Info) end at the first empty line
                int blank = body.indexOf("\n\n");
                body = blank < 0 ? body : body.substring(blank);
            }
            try {
                out.add(new Block(m.group(1).trim().toUpperCase(Locale.ROOT),
                        Base64.getMimeDecoder().decode(body.replaceAll("\\s", ""))));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("a PEM block " + m.group(1) + " is not valid base64", e);
            }
        }
        return out;
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }

    private record Block(String type, byte[] der) {
    }

    /** A cursor over DER elements between {@code from} and {@code to}: just enough to find a SEC1 curve. */
    private static final class Der {
        private final byte[] data;
        private final int to;
        private int at;
        int tag;
        private int start;
        private int valueAt;
        private int end;

        Der(byte[] data, int from, int to) {
            this.data = data;
            this.at = from;
            this.to = to;
        }

        boolean hasMore() {
            return at < to;
        }

        Der next(int expectedTag) {
            Der d = nextAny();
            if (d.tag != expectedTag) {
                throw new IllegalArgumentException("malformed key: DER tag " + d.tag + " where " + expectedTag
                        + " belongs");
            }
            return d;
        }

        Der nextAny() {
            if (at + 2 > to) {
                throw new IllegalArgumentException("malformed key: DER ends early");
            }
            Der d = new Der(data, at, to);
            d.start = at;
            d.tag = data[at] & 0xff;
            int len = data[at + 1] & 0xff;
            int p = at + 2;
            if (len >= 0x80) {
                int bytes = len & 0x7f;
                if (bytes == 0 || bytes > 3 || p + bytes > to) {
                    throw new IllegalArgumentException("malformed key: bad DER length");
                }
                len = 0;
                for (int i = 0; i < bytes; i++) {
                    len = (len << 8) | (data[p++] & 0xff);
                }
            }
            if (p + len > to) {
                throw new IllegalArgumentException("malformed key: DER element runs past its end");
            }
            d.valueAt = p;
            d.end = p + len;
            at = d.end;
            return d;
        }

        Der inside() {
            return new Der(data, valueAt, end);
        }

        byte[] encoded() {
            byte[] out = new byte[end - start];
            System.arraycopy(data, start, out, 0, out.length);
            return out;
        }
    }
}
