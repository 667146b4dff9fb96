package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

import dev.cor.base.testing.TestCa;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code --trustStore}: a PEM bundle or a PKCS12 store, its CAs added to the JDK's default ones -
 * never in their place - read in-process (the end-to-end tests run the jar: OutboundTlsProcessTest).
 */
class OutboundFlagsTest {
    private static TestCa ca;
    private static TestCa second;

    @BeforeAll
    static void makeCas() throws Exception {
        ca = TestCa.make("cor trust store test CA");
        second = TestCa.make("cor second test CA");
    }

    @AfterAll
    static void deleteCas() throws Exception {
        ca.delete();
        second.delete();
    }

    private static Set<X509Certificate> jdkCas() throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init((KeyStore) null);
        return Set.copyOf(java.util.Arrays.asList(((X509TrustManager) tmf.getTrustManagers()[0]).getAcceptedIssuers()));
    }

    private static Set<X509Certificate> trusted(OutboundFlags f) {
        return Set.copyOf(java.util.Arrays.asList(f.trustManager().getAcceptedIssuers()));
    }

    @Test
    void a_pem_bundle_of_two_cas_is_read_whole() throws Exception {
        Path bundle = ca.dir().resolve("bundle.pem");
        Files.writeString(bundle, Files.readString(ca.caPem()) + "\n" + Files.readString(second.caPem()), StandardCharsets.US_ASCII);
        List<X509Certificate> certs = OutboundFlags.readStore(bundle, null);
        assertEquals(List.of(ca.caCertificate(), second.caCertificate()), certs);
        assertTrue(trusted(new OutboundFlags(bundle.toString(), null, List.of(), List.of())).containsAll(certs));
    }

    @Test
    void the_added_cas_join_the_jdks_default_ones() throws Exception {
        OutboundFlags f = new OutboundFlags(ca.caPem().toString(), null, List.of(), List.of());
        Set<X509Certificate> all = trusted(f);
        Set<X509Certificate> jdk = jdkCas();
        assertTrue(jdk.size() > 10, "the JDK ships its CAs: " + jdk.size());
        assertTrue(all.containsAll(jdk), "a JDK CA is missing: --trustStore replaced the default trust");
        assertTrue(all.contains(ca.caCertificate()));
        assertEquals(jdk.size() + 1, all.size());
    }

    @Test
    void a_pkcs12_store_made_by_keytool_is_read_with_its_password() throws Exception {
        Path p12 = ca.dir().resolve("trust.p12");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(), "-importcert",
                "-noprompt", "-alias", "ca", "-file", ca.caPem().toString(), "-storetype", "PKCS12", "-keystore", p12.toString(),
                "-storepass", "trust-pass").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, out);
        assertEquals(List.of(ca.caCertificate()), OutboundFlags.readStore(p12, "trust-pass"));
        String refused = assertThrows(IllegalArgumentException.class, () -> OutboundFlags.readStore(p12, null)).getMessage();
        assertTrue(refused.contains("--trustStorePassword"), refused);
    }

    @Test
    void a_file_that_is_neither_is_refused_naming_it() throws Exception {
        Path junk = ca.dir().resolve("junk.bin");
        Files.write(junk, new byte[] {1, 2, 3, 4});
        String m = assertThrows(IllegalArgumentException.class, () -> OutboundFlags.readStore(junk, null)).getMessage();
        assertTrue(m.startsWith("--trustStore " + junk + " is neither a PEM bundle nor a PKCS12 store"), m);
    }
}
