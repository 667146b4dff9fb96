package dev.cor.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A certificate authority made at test time by the JDK's {@code keytool} and a server certificate
 * it signed for {@code 127.0.0.1} and {@code localhost}, written as an operator hands them to the
 * broker: {@link #key} (PEM PKCS#8), {@link #cert} (PEM, the server's certificate then the CA's)
 * and {@link #ca} (the CA's certificate, PEM, for clients). Made once per test class.
 */
final class TestPki {
    private static final String PASS = "changeit";

    final Path dir;
    final Path key;
    final Path cert;
    final Path ca;
    private final KeyStore caStore;

    private TestPki(Path dir, KeyStore caStore) {
        this.dir = dir;
        this.key = dir.resolve("server-key.pem");
        this.cert = dir.resolve("server-chain.pem");
        this.ca = dir.resolve("ca.pem");
        this.caStore = caStore;
    }

    /** A new CA and server certificate (EC P-256 unless {@code keyalg} says RSA) in a new directory. */
    static TestPki make(String keyalg) throws Exception {
        Path dir = Files.createTempDirectory("cor-pki");
        Path caP12 = dir.resolve("ca.p12");
        Path serverP12 = dir.resolve("server.p12");
        String[] alg = keyalg.equals("RSA") ? new String[] {"-keyalg", "RSA", "-keysize", "2048"}
                : new String[] {"-keyalg", "EC", "-groupname", "secp256r1"};
        keytool("-genkeypair", "-alias", "ca", "-dname", "CN=cor test CA", "-ext", "bc:c", "-validity", "2",
                "-keyalg", "EC", "-groupname", "secp256r1", "-storetype", "PKCS12", "-keystore", caP12.toString());
        keytool(concat(new String[] {"-genkeypair", "-alias", "server", "-dname", "CN=localhost", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", serverP12.toString()}, alg));
        Path csr = dir.resolve("server.csr");
        Path signed = dir.resolve("server.crt");
        keytool("-certreq", "-alias", "server", "-keystore", serverP12.toString(), "-file", csr.toString());
        keytool("-gencert", "-alias", "ca", "-keystore", caP12.toString(), "-infile", csr.toString(), "-outfile",
                signed.toString(), "-rfc", "-validity", "2", "-ext", "san=ip:127.0.0.1,dns:localhost",
                "-ext", "eku=serverAuth");
        KeyStore caStore = load(caP12);
        KeyStore server = load(serverP12);
        TestPki pki = new TestPki(dir, caStore);
        Key k = server.getKey("server", PASS.toCharArray());
        Files.writeString(pki.key, pem("PRIVATE KEY", k.getEncoded()), StandardCharsets.US_ASCII);
        String caPem = pem("CERTIFICATE", caStore.getCertificate("ca").getEncoded());
        Files.writeString(pki.ca, caPem, StandardCharsets.US_ASCII);
        Files.writeString(pki.cert, Files.readString(signed, StandardCharsets.US_ASCII).strip() + "\n" + caPem,
                StandardCharsets.US_ASCII);
        return pki;
    }

    /** A client context that trusts this CA alone. */
    SSLContext clientContext(String protocol) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        Certificate c = caStore.getCertificate("ca");
        trust.setCertificateEntry("ca", c);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance(protocol);
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    void delete() throws IOException {
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static KeyStore load(Path p12) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(p12)) {
            ks.load(in, PASS.toCharArray());
        }
        return ks;
    }

    private static void keytool(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("-storepass", PASS, "-keypass", PASS, "-noprompt"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new AssertionError("keytool " + String.join(" ", args) + " failed: " + out);
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
