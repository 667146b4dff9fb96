package dev.cor.server;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM files read with the JDK alone: an unencrypted private key - PKCS#8 ({@code PRIVATE KEY}:
 * RSA, EC, Ed25519...), PKCS#1 ({@code RSA PRIVATE KEY}) or SEC1 ({@code EC PRIVATE KEY}), the
 * two older forms rewrapped as PKCS#8 - and a certificate chain, the server's own first. Every
 * failure is an {@link IllegalArgumentException} naming the file and what was wrong, never the
 * key's bytes. Stateless; any thread.
 */
final class PemFiles {
    /** Larger than any key or chain an operator has; a larger file is not read whole. */
    static final long MAX_FILE_BYTES = 1024 * 1024;

    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    // rsaEncryption (1.2.840.113549.1.1.1) with NULL parameters, as an AlgorithmIdentifier.
    private static final byte[] RSA_ALGORITHM = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86,
            (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
    // id-ecPublicKey (1.2.840.10045.2.1), the OID alone: its curve follows it in the identifier.
    private static final byte[] EC_PUBLIC_KEY = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

    private PemFiles() {
    }

    /** The private key in {@code file}. */
    static PrivateKey privateKey(Path file) {
        for (Block b : blocks(file)) {
            byte[] pkcs8 = switch (b.type()) {
                case "PRIVATE KEY" -> b.der();
                case "RSA PRIVATE KEY" -> pkcs8(RSA_ALGORITHM, b.der());
                case "EC PRIVATE KEY" -> pkcs8(ecAlgorithm(file, b.der()), b.der());
                case "ENCRYPTED PRIVATE KEY" -> throw new IllegalArgumentException(file
                        + ": the key is encrypted; give it unencrypted (openssl pkcs8 -nocrypt), readable by this user only");
                default -> null;
            };
            if (pkcs8 != null) {
                return decode(file, pkcs8);
            }
        }
        throw new IllegalArgumentException(file + " holds no PEM private key (BEGIN PRIVATE KEY, RSA PRIVATE KEY"
                + " or EC PRIVATE KEY)");
    }

    /** The certificates in {@code file}, in the file's order (the server's own first). */
    static List<X509Certificate> certificates(Path file) {
        List<X509Certificate> chain = new ArrayList<>();
        try {
            CertificateFactory f = CertificateFactory.getInstance("X.509");
            for (Block b : blocks(file)) {
                if (b.type().equals("CERTIFICATE")) {
                    chain.add((X509Certificate) f.generateCertificate(new ByteArrayInputStream(b.der())));
                }
            }
        } catch (CertificateException e) {
            throw new IllegalArgumentException(file + " holds a certificate that cannot be read: " + e.getMessage(), e);
        }
        if (chain.isEmpty()) {
            throw new IllegalArgumentException(file + " holds no PEM certificate (BEGIN CERTIFICATE)");
        }
        return chain;
    }

    private static PrivateKey decode(Path file, byte[] pkcs8) {
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(pkcs8));
            } catch (GeneralSecurityException | RuntimeException notThisOne) {
                // the next algorithm
            }
        }
        throw new IllegalArgumentException(file + " holds a private key of no algorithm this JDK reads (RSA, EC, EdDSA)");
    }

    /** PKCS#8's PrivateKeyInfo: version 0, the algorithm, the older form's DER as the key. */
    private static byte[] pkcs8(byte[] algorithm, byte[] key) {
        return tlv(0x30, concat(new byte[] {0x02, 0x01, 0x00}, algorithm, tlv(0x04, key)));
    }

    /**
     * SEC1's ECPrivateKey names its curve in [0]; PKCS#8 names it in the algorithm identifier
     * instead (RFC 5915 § 3): the curve's OID is copied there.
     */
    private static byte[] ecAlgorithm(Path file, byte[] sec1) {
        Der seq = Der.read(file, sec1, 0);
        if (seq.tag != 0x30) {
            throw new IllegalArgumentException(file + ": the EC key is not a DER sequence");
        }
        for (int at = seq.start; at < seq.end; ) {
            Der e = Der.read(file, sec1, at);
            if (e.tag == 0xa0) {
                Der oid = Der.read(file, sec1, e.start);
                byte[] curve = java.util.Arrays.copyOfRange(sec1, e.start, oid.end);
                return tlv(0x30, concat(EC_PUBLIC_KEY, curve));
            }
            at = e.end;
        }
        throw new IllegalArgumentException(file + ": the EC key names no curve");
    }

    private static List<Block> blocks(Path file) {
        String text;
        try {
            if (Files.size(file) > MAX_FILE_BYTES) {
                throw new IllegalArgumentException(file + " is larger than " + MAX_FILE_BYTES + " bytes: not a PEM key or chain");
            }
            text = Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
        }
        List<Block> out = new ArrayList<>();
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            try {
                out.add(new Block(m.group(1), Base64.getMimeDecoder().decode(m.group(2))));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file + ": a " + m.group(1) + " block is not base64", e);
            }
        }
        return out;
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

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private record Block(String type, byte[] der) {
    }

    /** One DER element: its tag and where its value starts and ends in the array. */
    private record Der(int tag, int start, int end) {
        static Der read(Path file, byte[] b, int at) {
            if (at + 2 > b.length) {
                throw truncated(file);
            }
            int tag = b[at] & 0xff;
            int len = b[at + 1] & 0xff;
            int start = at + 2;
            if (len >= 0x80) {
                int bytes = len & 0x7f;
                if (bytes == 0 || bytes > 3 || start + bytes > b.length) {
                    throw truncated(file);
                }
                len = 0;
                for (int i = 0; i < bytes; i++) {
                    len = (len << 8) | (b[start + i] & 0xff);
                }
                start += bytes;
            }
            if (start + len > b.length) {
                throw truncated(file);
            }
            return new Der(tag, start, start + len);
        }

        private static IllegalArgumentException truncated(Path file) {
            return new IllegalArgumentException(file + ": the EC key's DER is cut short");
        }
    }
}
