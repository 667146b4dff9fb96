package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CorHttpServer.Builder#accessLog}: every answer written is reported once, on its loop, with
 * its request, status, body bytes on the wire and the time from its first byte read to its last
 * written - pipelined, inline, as a coroutine, refused before dispatch, and held back by a client
 * that does not read.
 */
class CorHttpAccessLogTest {
    private final TestApp app = new TestApp();
    private final LinkedBlockingQueue<Entry> entries = new LinkedBlockingQueue<>();
    private final List<CorHttpServer> servers = new ArrayList<>();

    record Entry(int loop, String method, String path, String query, String tenant, int status, long bodyBytes, long nanos,
            String thread) {
    }

    private CorHttpServer server() {
        CorHttpServer s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(app)
                .coroutineHook(r -> true).workerThreads(2)
                .accessLog((loop, x, bytes, nanos) -> entries.add(new Entry(loop, x.method(), x.path(), x.query(),
                        x.headers().get("NGSILD-Tenant"), x.status(), bytes, nanos, Thread.currentThread().getName())))
                .build().start();
        servers.add(s);
        return s;
    }

    @AfterEach
    void stop() {
        servers.forEach(s -> s.stop(1000));
    }

    private Entry next() throws InterruptedException {
        Entry e = entries.poll(10, TimeUnit.SECONDS);
        if (e == null) {
            throw new AssertionError("no access log entry within 10 s");
        }
        return e;
    }

    @Test
    void each_pipelined_answer_is_reported_once_in_order_with_its_status_bytes_and_time() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            c.send("GET /hello?x=1 HTTP/1.1\r\nHost: t\r\nNGSILD-Tenant: t1\r\n\r\n"
                    + "HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "GET /slow?ms=60 HTTP/1.1\r\nHost: t\r\n\r\n"
                    + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
                    + "DELETE /nope HTTP/1.1\r\nHost: t\r\n\r\n");
            assertEquals(200, c.read().status());
            assertEquals(200, c.read(true).status());
            assertEquals(200, c.read().status());
            assertEquals(200, c.read().status());
            RawHttp.Answer notFound = c.read();
            assertEquals(404, notFound.status());

            Entry hello = next();
            assertEquals(List.of("GET", "/hello", "x=1", "t1", 200, 17L), List.of(hello.method(), hello.path(), hello.query(),
                    hello.tenant(), hello.status(), hello.bodyBytes()));
            assertEquals(0, hello.loop());
            assertEquals("cor-http-0", hello.thread(), "told on the connection's loop");
            Entry head = next();
            assertEquals(List.of("HEAD", 0L), List.of(head.method(), head.bodyBytes()), "HEAD: no body on the wire");
            Entry slow = next();
            assertEquals("/slow", slow.path());
            assertTrue(slow.nanos() >= TimeUnit.MILLISECONDS.toNanos(60), "the coroutine's sleep is in its time: " + slow.nanos());
            Entry echo = next();
            assertEquals(List.of("POST", "/echo", 200, 5L), List.of(echo.method(), echo.path(), echo.status(), echo.bodyBytes()));
            Entry nope = next();
            assertEquals(List.of("DELETE", "/nope", 404, (long) notFound.body().length),
                    List.of(nope.method(), nope.path(), nope.status(), nope.bodyBytes()));
            assertNull(entries.poll(), "one entry per answer");
        }
    }

    @Test
    void a_request_refused_before_dispatch_is_reported_with_what_was_read_of_it() throws Exception {
        CorHttpServer s = server();
        try (RawHttp c = new RawHttp(s.port())) {
            assertEquals(400, c.send("GET /hello HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n").read().status());
        }
        Entry e = next();
        assertEquals(List.of("GET", "/hello", 400), List.of(e.method(), e.path(), e.status()));
        try (RawHttp c = new RawHttp(s.port())) {
            assertEquals(400, c.send("GET/hello HTTP/1.1\r\nHost: t\r\n\r\n").read().status());
        }
        Entry line = next();
        assertEquals(List.of("-", "-", 400), List.of(line.method(), line.path(), line.status()), "nothing of the line was read");
    }

    @Test
    void an_answer_held_back_by_a_client_that_does_not_read_is_reported_once_it_is_out() throws Exception {
        CorHttpServer s = server();
        int bytes = 16 * 1024 * 1024; // far more than the socket buffers hold
        try (RawHttp big = new RawHttp(s.port()); RawHttp other = new RawHttp(s.port())) {
            big.send("GET /big?bytes=" + bytes + " HTTP/1.1\r\nHost: t\r\n\r\n");
            // the barrier: a later answer on the same loop is reported while the big one is still held
            assertEquals(200, other.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n").read().status());
            assertEquals("/hello", next().path());
            assertNull(entries.poll(), "the big answer is not out yet");
            assertEquals(bytes, big.read().body().length);
            Entry e = next();
            assertEquals(List.of("/big", 200, (long) bytes), List.of(e.path(), e.status(), e.bodyBytes()));
        }
    }
}
