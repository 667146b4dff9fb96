package dev.cor.rest.client;

import static dev.cor.base.testing.LoopTesting.inCoroutine;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every way HTTP/1.1 frames a response body is read whole, and keep-alive follows the framing. */
class CorRestClientFramingTest {
    private CorCoLoop loop;
    private CorRestClient client;
    private TestServer server;

    @BeforeEach
    void setUp() throws Exception {
        loop = LoopTesting.start("framing-loop", 64);
        client = CorRestClient.builder().build();
        server = TestServer.http((req, s, out) -> {
            switch (req.target()) {
                case "/chunked" -> TestServer.write(out, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n");
                case "/close" -> {
                    TestServer.write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end");
                    s.close();
                }
                case "/head" -> TestServer.write(out, "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n");
                case "/204" -> TestServer.write(out, "HTTP/1.1 204 No Content\r\n\r\n");
                case "/304" -> TestServer.write(out, "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n");
                case "/continue" -> TestServer.write(out, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
                        + "HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\ncreated");
                case "/lf" -> TestServer.write(out, "HTTP/1.1 200 OK\nContent-Length: 2\nX-A:  spaced \t\nx-a: second\n\nlf");
                case "/empty" -> TestServer.write(out, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                default -> TestServer.respond(out, 404, "no " + req.target());
            }
        });
    }

    @AfterEach
    void tearDown() throws Exception {
        client.close();
        LoopTesting.stop(loop);
        server.close();
    }

    private CorRestClientResponse get(String path) throws Exception {
        return inCoroutine(loop, () -> client.send(CorRestClientRequest.get(server.url(path))));
    }

    @Test
    void aChunkedBodyIsJoinedWithExtensionsAndTrailersSkippedAndTheConnectionKept() throws Exception {
        CorRestClientResponse r = get("/chunked");
        assertEquals("hello 0123456789", r.bodyText());
        assertEquals(List.of(1, 1), onLoopCounts());
    }

    @Test
    void aCloseDelimitedBodyIsReadToTheCloseAndTheConnectionNotKept() throws Exception {
        CorRestClientResponse r = get("/close");
        assertEquals("until the end", r.bodyText());
        assertEquals("text/plain", r.header("content-type"));
        assertEquals(List.of(0, 0), onLoopCounts());
    }

    @Test
    void headAnd204And304HaveNoBodyWhateverTheirContentLength() throws Exception {
        List<Integer> lengths = inCoroutine(loop, () -> List.of(
                client.send(CorRestClientRequest.head(server.url("/head"))).body().length,
                client.send(CorRestClientRequest.get(server.url("/204"))).body().length,
                client.send(CorRestClientRequest.get(server.url("/304"))).body().length,
                client.send(CorRestClientRequest.get(server.url("/empty"))).body().length));
        assertEquals(List.of(0, 0, 0, 0), lengths);
        assertEquals(1, server.connections.get(), "a bodiless response cost its connection");
    }

    @Test
    void interimResponsesAreSkippedForTheFinalOne() throws Exception {
        CorRestClientResponse r = get("/continue");
        assertEquals(201, r.status());
        assertEquals("Created", r.reason());
        assertEquals("created", r.bodyText());
    }

    @Test
    void bareLineFeedsAndRepeatedFieldsAreRead() throws Exception {
        CorRestClientResponse r = get("/lf");
        assertEquals("lf", r.bodyText());
        assertEquals(List.of("spaced", "second"), r.headers().getAll("X-A"));
        assertEquals("HTTP/1.1", r.version());
    }

    private List<Integer> onLoopCounts() throws Exception {
        return LoopTesting.onLoop(loop, () -> List.of(client.openConnections(), client.idleConnections()));
    }
}
