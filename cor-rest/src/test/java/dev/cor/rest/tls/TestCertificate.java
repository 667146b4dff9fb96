package dev.cor.rest.tls;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Test helper: a self-signed EC certificate for {@code localhost} and {@code 127.0.0.1}, made at
 * test time by the JDK's {@code keytool}, with a server context that presents it and a client
 * context that trusts it alone. Two of them do not trust each other.
 */
public final class TestCertificate {
    private static final char[] PASSWORD = "test-only".toCharArray();

    /** Presents the certificate (a server's). */
    public final SSLContext serverContext;
    /** Trusts this certificate and nothing else (a client's). */
    public final SSLContext clientContext;

    private TestCertificate(SSLContext serverContext, SSLContext clientContext) {
        this.serverContext = serverContext;
        this.clientContext = clientContext;
    }

    /** A new certificate, its key store written in {@code dir} under {@code name}. */
    public static TestCertificate make(Path dir, String name) throws Exception {
        Path store = dir.resolve(name + ".p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "localhost", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=localhost", "-ext", "san=ip:127.0.0.1,dns:localhost", "-validity", "2",
                "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD))
                .redirectErrorStream(true).start();
        String output = new String(keytool.getInputStream().readAllBytes());
        assertTrue(keytool.waitFor(60, TimeUnit.SECONDS) && keytool.exitValue() == 0, "keytool failed: " + output);

        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, PASSWORD);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, PASSWORD);
        SSLContext server = SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);

        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("localhost", keys.getCertificate("localhost"));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext client = SSLContext.getInstance("TLS");
        client.init(null, tmf.getTrustManagers(), null);
        return new TestCertificate(server, client);
    }
}
