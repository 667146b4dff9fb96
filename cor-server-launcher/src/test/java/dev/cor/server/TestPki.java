package dev.cor.server;

import java.io.IOException;
import java.nio.file.Path;
import java.security.KeyStore;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import dev.cor.base.testing.TestCa;

/**
 * A certificate authority made at test time ({@link TestCa}: the JDK's {@code keytool}) and a
 * server certificate it signed for {@code 127.0.0.1} and {@code localhost}, written as an
 * operator hands them to the broker: {@link #key} (PEM PKCS#8), {@link #cert} (PEM, the server's
 * certificate then the CA's) and {@link #ca} (the CA's certificate, PEM, for clients). Made once
 * per test class.
 */
final class TestPki {
    final Path dir;
    final Path key;
    final Path cert;
    final Path ca;
    private final TestCa authority;

    private TestPki(TestCa authority, TestCa.Issued server) {
        this.authority = authority;
        this.dir = authority.dir();
        this.key = server.keyPem;
        this.cert = server.chainPem;
        this.ca = authority.caPem();
    }

    /** A new CA and server certificate (EC P-256 unless {@code keyalg} says RSA) in a new directory. */
    static TestPki make(String keyalg) throws Exception {
        TestCa authority = TestCa.make("cor test CA");
        return new TestPki(authority, authority.issue(TestCa.LOCAL, null, keyalg));
    }

    /** A client context of {@code protocol} that trusts this CA alone. */
    SSLContext clientContext(String protocol) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("ca", authority.caCertificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance(protocol);
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    void delete() throws IOException {
        authority.delete();
    }
}
