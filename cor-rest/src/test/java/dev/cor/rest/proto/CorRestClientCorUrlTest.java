package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.CorRest;
import dev.cor.rest.client.CorRestCall;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientException;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A cor:// URL works wherever the HTTP client takes an http:// one (spec § 9.3). */
class CorRestClientCorUrlTest {
    private final ProtoFixture fx = new ProtoFixture();
    private final CorRestClient client = CorRestClient.builder().responseTimeoutMs(3000).build();

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        fx.close();
    }

    @Test
    void aCorUrlIsSentOverCorProtoFromACoroutineAndFromAPlainThread() throws Exception {
        CorProtoServer server = fx.server(r -> r.respond(200, "text/plain",
                (r.method() + " " + r.path() + "?" + r.query()).getBytes(StandardCharsets.UTF_8)), fx.loop("cor-url-server"));
        String url = "cor://127.0.0.1:" + server.port() + "/entities/x?attrs=a";
        CorCoLoop loop = fx.loop("cor-url-client");
        String viaCoroutine = LoopTesting.inCoroutine(loop, () -> client.send(CorRestClientRequest.get(url)).bodyText());
        assertEquals("GET /entities/x?attrs=a", viaCoroutine);
        CorRestClientResponse blocking = client.send(CorRestClientRequest.get(url));
        assertEquals(200, blocking.status());
        assertEquals("GET /entities/x?attrs=a", blocking.bodyText());
        assertEquals("text/plain", blocking.header("Content-Type"));
    }

    @Test
    void aJsonBodyTravelsAsATreeWithNoTextToParse() throws Exception {
        AtomicReference<String> seen = new AtomicReference<>();
        CorProtoServer server = fx.server(r -> {
            seen.set("bytes=" + r.body().length + " tree=" + r.json().get("@context").asText());
            r.respond(201, null, null);
        }, fx.loop("cor-tree-server"));
        CorRestClientResponse r = client.send(CorRestClientRequest.post("cor://127.0.0.1:" + server.port() + "/entities",
                "application/ld+json", "{\"id\":\"urn:x\",\"@context\":\"https://example.org/ctx.jsonld\"}".getBytes()));
        assertEquals(201, r.status());
        assertEquals("bytes=0 tree=https://example.org/ctx.jsonld", seen.get());
    }

    @Test
    void anHttpAndACorRequestFanOutTogether() throws Exception {
        // Each server answers once the other has its request, or says it was alone after 2 s:
        // run one after the other, the first would come back "alone" (or not within 3 s).
        CountDownLatch httpArrived = new CountDownLatch(1);
        CountDownLatch corArrived = new CountDownLatch(1);
        CorProtoServer cor = fx.server(r -> {
            corArrived.countDown();
            long until = System.nanoTime() + 2_000_000_000L;
            while (httpArrived.getCount() > 0 && System.nanoTime() - until < 0) {
                CorCo.sleep(10);
            }
            r.respond(200, "text/plain", (httpArrived.getCount() == 0 ? "cor together" : "cor alone").getBytes());
        }, fx.loop("cor-fan"));
        try (ServerSocket http = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            Thread httpServer = Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = http.accept()) {
                    BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
                    for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                        // the request head; a GET has no body
                    }
                    httpArrived.countDown();
                    String body = corArrived.await(2, TimeUnit.SECONDS) ? "http together" : "http alone";
                    s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length()
                            + "\r\nConnection: close\r\n\r\n" + body).getBytes(StandardCharsets.ISO_8859_1));
                } catch (Exception e) {
                    // the test fails on what the client got
                }
            });
            CorCoLoop loop = fx.loop("fan-client");
            List<String> got = LoopTesting.inCoroutine(loop, () -> {
                CorRestCall h = client.start(CorRestClientRequest.get("http://127.0.0.1:" + http.getLocalPort() + "/h"));
                CorRestCall c = client.start(CorRestClientRequest.get("cor://127.0.0.1:" + cor.port() + "/c"));
                CorRestClient.awaitAll(h, c);
                return List.of(h.await().bodyText(), c.await().bodyText());
            });
            assertEquals(List.of("http together", "cor together"), got, "both in flight at once, both answered");
            httpServer.join(5000);
        }
    }

    @Test
    void aCorPeerNobodyListensOnIsRefusedAndATimeoutIsA504() throws Exception {
        CorRestClientException refused = assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("cor://127.0.0.1:1/x")));
        assertEquals(CorRestClientException.Kind.REFUSED, refused.kind());
        assertEquals(502, refused.gatewayStatus());
        CorProtoServer stuck = fx.server(r -> {
            CorCo.sleep(10_000);
            r.respond(200, null, null);
        }, fx.loop("cor-stuck"));
        CorRestClientException late = assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("cor://127.0.0.1:" + stuck.port() + "/x")));
        assertEquals(CorRestClientException.Kind.TIMEOUT, late.kind());
        assertEquals(504, late.gatewayStatus());
        CorRestClientException noPort = assertThrows(CorRestClientException.class,
                () -> client.send(CorRestClientRequest.get("cor://127.0.0.1/x")));
        assertTrue(noPort.getMessage().contains("needs a port"), noPort.getMessage());
    }
}
