package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a peer can make the server hold: memory and connections stay bounded whatever it declares or opens. */
class CorHttpPeerLimitsTest {
    private static final int MAX_BODY = 1024 * 1024;

    private final List<CorHttpServer> servers = new ArrayList<>();
    private final List<RawHttp> clients = new ArrayList<>();

    @AfterEach
    void stopAll() throws Exception {
        for (RawHttp c : clients) {
            c.close();
        }
        for (CorHttpServer s : servers) {
            s.stop(1000);
        }
    }

    private CorHttpServer server(Consumer<CorHttpServer.Builder> config) {
        CorHttpServer.Builder b = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(new TestApp())
                .maxBodyBytes(MAX_BODY).workerThreads(2);
        config.accept(b);
        CorHttpServer s = b.build().start();
        servers.add(s);
        return s;
    }

    private RawHttp client(CorHttpServer s) throws Exception {
        RawHttp c = new RawHttp(s.port());
        clients.add(c);
        return c;
    }

    /** Connections reading a body now, and the bytes their body buffers hold, over every loop (on the loops). */
    private static long[] bodyBuffers(CorHttpServer s) throws Exception {
        long[] sum = new long[2];
        for (HttpLoop l : s.httpLoops()) {
            long[] one = LoopTesting.onLoop(l.loop, l::bodyBuffers);
            sum[0] += one[0];
            sum[1] += one[1];
        }
        return sum;
    }

    @Test
    void bodiesDeclaredAtTheLimitAreNotAllocatedBeforeTheirBytesArriveAndStillArriveWhole() throws Exception {
        CorHttpServer s = server(b -> { });
        int each = 10;
        for (int i = 0; i < each; i++) {
            client(s).send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: " + MAX_BODY
                    + "\r\n\r\n0123456789");
            client(s).send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + Integer.toHexString(MAX_BODY) + "\r\n0123456789");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long[] held = bodyBuffers(s);
        while (held[0] < 2 * each && System.nanoTime() < deadline) {
            Thread.sleep(5);
            held = bodyBuffers(s);
        }
        assertEquals(2 * each, held[0], "connections reading a body");
        assertTrue(held[1] <= 2 * each * 16 * 1024, held[1] + " bytes of body buffers for " + 2 * each
                + " bodies of 10 bytes so far, declared at " + MAX_BODY);

        // The rest of one of each comes: the buffers grow to it, and the bodies are whole.
        byte[] rest = new byte[MAX_BODY - 10];
        for (int i = 0; i < rest.length; i++) {
            rest[i] = (byte) ('a' + i % 26);
        }
        ByteArrayOutputStream want = new ByteArrayOutputStream();
        want.write("0123456789".getBytes(StandardCharsets.US_ASCII));
        want.write(rest);
        RawHttp byLength = clients.get(0);
        assertArrayEquals(want.toByteArray(), byLength.send(rest).read().body());
        RawHttp chunked = clients.get(1);
        chunked.send(rest).send("\r\n0\r\n\r\n");
        assertArrayEquals(want.toByteArray(), chunked.read().body());
    }

    private static String get(String target) {
        return "GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n";
    }

    private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertTrue(condition.getAsBoolean(), what);
    }

    @Test
    void pastMaxConnectionsANewConnectionIsAnswered503AndClosedAndCountedUntilOneCloses() throws Exception {
        CorHttpServer s = server(b -> b.maxConnections(2).loops(2));
        RawHttp first = client(s);
        RawHttp second = client(s);
        assertEquals(200, first.send(get("/hello")).read().status());
        assertEquals(200, second.send(get("/hello")).read().status());
        for (int i = 1; i <= 3; i++) {
            RawHttp over = client(s);
            RawHttp.Answer a = over.send(get("/hello")).read();
            assertEquals(503, a.status(), "refused past the cap");
            assertEquals("close", a.fields().get("connection"));
            assertTrue(over.closedByServer(), "closed after the 503");
            assertEquals(i, s.connectionsRefused());
        }
        assertEquals(2, s.connectionsOpen());
        first.close();
        await(() -> s.connectionsOpen() == 1, "the closed connection is counted out");
        assertEquals(200, client(s).send(get("/hello")).read().status(), "served again below the cap");
        assertEquals(3, s.connectionsRefused());
    }

    @Test
    void theConnectionCapMustBePositive() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> CorHttpServer.builder().maxConnections(0));
    }
}
