package dev.cor.rest.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

import dev.cor.base.testing.TestCa;
import dev.cor.rest.client.CorRestClientException.Kind;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A TLS failure says which: certificates made by a CA of the test, served over real sockets, each
 * refused for its own reason - and the message is the client's words, never the JDK's text about
 * the peer's certificate.
 */
class CorRestClientTlsFailureTest {
    private static TestCa trusted;
    private static TestCa other;
    private static TestServer good;
    private static TestServer untrusted;
    private static TestServer expired;
    private static TestServer wrongHost;
    private static TestServer silent;
    private static CorRestClient client;

    @BeforeAll
    static void makeCertificatesAndServers() throws Exception {
        trusted = TestCa.make("cor trusted test CA");
        other = TestCa.make("cor other test CA");
        good = serve(trusted.issue().serverContext());
        untrusted = serve(other.issue().serverContext());
        expired = serve(trusted.issue(TestCa.LOCAL, "-10d", "EC").serverContext());
        wrongHost = serve(trusted.issue("san=dns:elsewhere.example", null, "EC").serverContext());
        silent = TestServer.raw(s -> TestServer.drain(s)); // takes the connection, never answers the hello
        client = CorRestClient.builder().sslContext(trusted.trusting()).build();
    }

    private static TestServer serve(SSLContext ctx) throws Exception {
        SSLServerSocket ss = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0, 16,
                InetAddress.getByName("127.0.0.1"));
        return TestServer.http(ss, (req, s, out) -> TestServer.respond(out, 200, "ok"));
    }

    @AfterAll
    static void stop() throws Exception {
        client.close();
        for (TestServer s : new TestServer[] {good, untrusted, expired, wrongHost, silent}) {
            s.close();
        }
        trusted.delete();
        other.delete();
    }

    private static CorRestClientException failure(TestServer server) {
        return assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("https://localhost:" + server.port() + "/")));
    }

    private static void assertOwnWords(CorRestClientException e) {
        for (String jdk : new String[] {"PKIX", "sun.security", "NotAfter", "elsewhere.example", "CN="}) {
            assertFalse(e.getMessage().contains(jdk), "the JDK's or the peer's text in: " + e.getMessage());
            assertFalse(e.reason("the peer", 1).contains(jdk), e.reason("the peer", 1));
        }
    }

    @Test
    void a_certificate_of_the_trusted_ca_for_this_host_is_taken() throws Exception {
        assertEquals("ok", client.send(CorRestClientRequest.get("https://localhost:" + good.port() + "/")).bodyText());
    }

    @Test
    void a_certificate_of_another_ca_is_not_trusted() {
        CorRestClientException e = failure(untrusted);
        assertEquals(Kind.TLS, e.kind(), e.getMessage());
        assertEquals(TlsFailure.NOT_TRUSTED, e.tlsFailure(), e.getMessage());
        assertEquals("TLS with the peer failed: its certificate is not trusted", e.reason("the peer", 1));
        assertOwnWords(e);
    }

    @Test
    void an_expired_certificate_of_the_trusted_ca_has_expired() {
        CorRestClientException e = failure(expired);
        assertEquals(TlsFailure.EXPIRED, e.tlsFailure(), e.getMessage());
        assertTrue(e.getMessage().endsWith("its certificate has expired"), e.getMessage());
        assertOwnWords(e);
    }

    @Test
    void a_certificate_of_the_trusted_ca_for_another_host_is_a_name_mismatch() {
        CorRestClientException e = failure(wrongHost);
        assertEquals(TlsFailure.NAME_MISMATCH, e.tlsFailure(), e.getMessage());
        assertEquals("TLS with the peer failed: its certificate is not for this host name", e.reason("the peer", 1));
        assertOwnWords(e);
    }

    @Test
    void a_certificate_for_127_0_0_1_is_checked_against_the_address_too() throws Exception {
        // no SNI for an address, but the check holds: the wrong-host certificate names no IP
        CorRestClientException e = assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("https://127.0.0.1:" + wrongHost.port() + "/")));
        assertEquals(TlsFailure.NAME_MISMATCH, e.tlsFailure(), e.getMessage());
        assertEquals("ok", client.send(CorRestClientRequest.get("https://127.0.0.1:" + good.port() + "/")).bodyText());
    }

    @Test
    void a_peer_that_never_answers_the_hello_is_a_handshake_timeout() throws Exception {
        CorRestClientException e;
        try (CorRestClient impatient = CorRestClient.builder().sslContext(trusted.trusting()).handshakeTimeoutMs(300).build()) {
            e = assertThrows(CorRestClientException.class,
                    () -> impatient.send(CorRestClientRequest.get("https://localhost:" + silent.port() + "/")));
        }
        assertEquals(Kind.TIMEOUT, e.kind(), e.getMessage());
        assertEquals(TlsFailure.HANDSHAKE_TIMEOUT, e.tlsFailure(), e.getMessage());
        assertEquals("TLS with the peer failed: the handshake timed out", e.reason("the peer", 300));
    }
}
