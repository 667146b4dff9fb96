package dev.cor.base.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A certificate authority made at test time by the JDK's {@code keytool} (run as a process, as an
 * operator would), which issues server certificates - for the names a test asks, valid from the
 * date it asks (in the past: expired) - written as operators hand them over: PEM key, PEM chain,
 * PEM CA certificate. Shared by the modules' tests through this module's test jar. One per test
 * class; not thread-safe while issuing.
 */
public final class TestCa {
    private static final String PASS = "changeit";
    /** The names of a certificate for this machine: 127.0.0.1 and localhost. */
    public static final String LOCAL = "san=ip:127.0.0.1,dns:localhost";

    private final Path dir;
    private final Path caP12;
    private final X509Certificate caCert;
    private final Path caPem;
    private int issued;

    private TestCa(Path dir, Path caP12, X509Certificate caCert, Path caPem) {
        this.dir = dir;
        this.caP12 = caP12;
        this.caCert = caCert;
        this.caPem = caPem;
    }

    /** A new CA (EC P-256, valid two days) named {@code name}, in a new temporary directory. */
    public static TestCa make(String name) throws Exception {
        Path dir = Files.createTempDirectory("cor-ca");
        Path p12 = dir.resolve("ca.p12");
        keytool("-genkeypair", "-alias", "ca", "-dname", "CN=" + name, "-ext", "bc:c", "-validity", "2",
                "-keyalg", "EC", "-groupname", "secp256r1", "-storetype", "PKCS12", "-keystore", p12.toString());
        X509Certificate cert = (X509Certificate) load(p12).getCertificate("ca");
        Path pem = dir.resolve("ca.pem");
        Files.writeString(pem, pem("CERTIFICATE", cert.getEncoded()), StandardCharsets.US_ASCII);
        return new TestCa(dir, p12, cert, pem);
    }

    /** The CA's certificate, PEM: what a client is told to trust. */
    public Path caPem() {
        return caPem;
    }

    /** The CA's certificate. */
    public X509Certificate caCertificate() {
        return caCert;
    }

    /** The directory everything is written in. */
    public Path dir() {
        return dir;
    }

    /** A server certificate for 127.0.0.1 and localhost, valid from now for two days. */
    public Issued issue() throws Exception {
        return issue(LOCAL, null, "EC");
    }

    /**
     * A server certificate (CN=localhost, extended key usage serverAuth) signed by this CA.
     *
     * @param san       keytool's subject alternative names, e.g. {@code san=dns:wrong.example}
     * @param startDate keytool's {@code -startdate} ({@code -10d}: ten days ago, so with its two
     *                  days of validity it expired eight days ago), or {@code null} for now
     * @param keyalg    {@code EC} (P-256) or {@code RSA} (2048)
     */
    public Issued issue(String san, String startDate, String keyalg) throws Exception {
        int n = ++issued;
        Path p12 = dir.resolve("server-" + n + ".p12");
        String[] alg = keyalg.equals("RSA") ? new String[] {"-keyalg", "RSA", "-keysize", "2048"}
                : new String[] {"-keyalg", "EC", "-groupname", "secp256r1"};
        List<String> gen = new ArrayList<>(List.of("-genkeypair", "-alias", "server", "-dname", "CN=localhost",
                "-validity", "2", "-storetype", "PKCS12", "-keystore", p12.toString()));
        gen.addAll(List.of(alg));
        keytool(gen.toArray(new String[0]));
        Path csr = dir.resolve("server-" + n + ".csr");
        Path crt = dir.resolve("server-" + n + ".crt");
        keytool("-certreq", "-alias", "server", "-keystore", p12.toString(), "-file", csr.toString());
        List<String> sign = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", caP12.toString(),
                "-infile", csr.toString(), "-outfile", crt.toString(), "-rfc", "-validity", "2", "-ext", san,
                "-ext", "eku=serverAuth"));
        if (startDate != null) {
            sign.addAll(List.of("-startdate", startDate));
        }
        keytool(sign.toArray(new String[0]));
        X509Certificate leaf;
        try (InputStream in = Files.newInputStream(crt)) {
            leaf = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
        PrivateKey key = (PrivateKey) load(p12).getKey("server", PASS.toCharArray());
        return new Issued(this, n, key, leaf);
    }

    /** A client context that trusts this CA alone (hostname verification is the client's to turn on). */
    public SSLContext trusting() throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", caCert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /** Deletes the directory and everything written in it. */
    public void delete() throws IOException {
        try (var files = Files.walk(dir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** One server certificate the CA issued, with its key: as files, and as a server's {@link SSLContext}. */
    public static final class Issued {
        private final PrivateKey key;
        private final X509Certificate leaf;
        private final X509Certificate ca;
        /** The private key, PEM PKCS#8. */
        public final Path keyPem;
        /** The chain, PEM: the server's certificate, then the CA's. */
        public final Path chainPem;

        private Issued(TestCa ca, int n, PrivateKey key, X509Certificate leaf) throws Exception {
            this.key = key;
            this.leaf = leaf;
            this.ca = ca.caCert;
            this.keyPem = ca.dir.resolve("server-" + n + "-key.pem");
            this.chainPem = ca.dir.resolve("server-" + n + "-chain.pem");
            Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
            Files.writeString(chainPem, pem("CERTIFICATE", leaf.getEncoded()) + pem("CERTIFICATE", ca.caCert.getEncoded()),
                    StandardCharsets.US_ASCII);
        }

        /** The server's certificate. */
        public X509Certificate certificate() {
            return leaf;
        }

        /** A server's context presenting this certificate and the CA's. */
        public SSLContext serverContext() throws Exception {
            char[] none = new char[0];
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("server", key, none, new Certificate[] {leaf, ca});
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, none);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        }
    }

    /** {@code der} as one PEM block of {@code type}. */
    public static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
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
}
