package dev.cor.rest.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.client.CorRestClientException.Kind;

/**
 * The client asks its outbound policy with the address it is about to connect to - after the name
 * lookup - and a refusal sends nothing, over real sockets.
 */
class CorRestClientOutboundPolicyTest {
    private static final OutboundPolicy NO_LOOPBACK = OutboundPolicy.ranges(List.of("127.0.0.0/8", "::1/128"), List.of());

    @Test
    void a_denied_address_is_refused_before_any_connection_and_an_allowed_client_then_connects() throws Exception {
        try (TestServer server = TestServer.http((req, s, out) -> TestServer.respond(out, 200, "here"));
                CorRestClient denied = CorRestClient.builder().outboundPolicy(NO_LOOPBACK).build();
                CorRestClient allowed = CorRestClient.builder().build()) {
            CorRestClientException e = assertThrows(CorRestClientException.class,
                    () -> denied.send(CorRestClientRequest.get(server.url("/"))));
            assertEquals(Kind.DENIED, e.kind(), e.getMessage());
            assertEquals(OutboundPolicy.REFUSAL, e.reason("the peer " + server.url("/"), 1));
            // the barrier: the server accepts in order, so a connection of the denied client would be counted first
            assertEquals("here", allowed.send(CorRestClientRequest.get(server.url("/"))).bodyText());
            assertEquals(1, server.connections.get(), "the denied client connected");
        }
    }

    @Test
    void a_name_is_judged_by_the_address_it_resolves_to() throws Exception {
        CorRestResolver internal = CorRestResolver.of(host -> new InetAddress[] {InetAddress.ofLiteral("127.0.0.1")}, 60_000);
        try (TestServer server = TestServer.http((req, s, out) -> TestServer.respond(out, 200, "here"));
                CorRestClient client = CorRestClient.builder().resolver(internal).outboundPolicy(NO_LOOPBACK).build()) {
            CorRestClientException e = assertThrows(CorRestClientException.class,
                    () -> client.send(CorRestClientRequest.get("http://public.example:" + server.port() + "/")));
            assertEquals(Kind.DENIED, e.kind(), e.getMessage());
            assertEquals(0, server.connections.get());
        }
    }

    @Test
    void the_refusal_is_one_text_whatever_the_address_and_port() throws Exception {
        try (CorRestClient client = CorRestClient.builder().sslContext(javax.net.ssl.SSLContext.getDefault())
                .outboundPolicy(NO_LOOPBACK).build()) {
            String a = reason(client, "http://127.0.0.1:1/x");
            String b = reason(client, "https://127.0.0.2:65000/y");
            String c = reason(client, "http://[::1]:8080/z");
            assertEquals(OutboundPolicy.REFUSAL, a);
            assertEquals(a, b);
            assertEquals(a, c);
        }
    }

    private static String reason(CorRestClient client, String url) {
        CorRestClientException e = assertThrows(CorRestClientException.class, () -> client.send(CorRestClientRequest.get(url)));
        assertEquals(Kind.DENIED, e.kind(), url + ": " + e.getMessage());
        return e.reason(url, 1);
    }

    @Test
    void a_cor_or_cors_url_to_a_denied_address_is_refused_too() throws Exception {
        try (ServerSocket nobody = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                CorRestClient client = CorRestClient.builder().sslContext(javax.net.ssl.SSLContext.getDefault())
                        .outboundPolicy(NO_LOOPBACK).build()) {
            int port = nobody.getLocalPort();
            for (String scheme : new String[] {"cor", "cors"}) {
                CorRestClientException e = assertThrows(CorRestClientException.class,
                        () -> client.send(CorRestClientRequest.get(scheme + "://127.0.0.1:" + port + "/x")));
                assertEquals(Kind.DENIED, e.kind(), scheme + ": " + e.getMessage());
            }
        }
    }
}
