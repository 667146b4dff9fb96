package dev.cor.rest.proto;

import static dev.cor.rest.proto.ProtoFixture.readFrame;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client's side of § 8.3: a raw fake server that breaks the protocol gets GOAWAY with the
 * code, and the requests waiting on it fail typed, at once.
 */
class CorProtoClientViolationTest {
    private final ProtoFixture fx = new ProtoFixture();
    private ServerSocket fake;

    @AfterEach
    void tearDown() throws Exception {
        if (fake != null) {
            fake.close();
        }
        fx.close();
    }

    /** A fake server: reads the HELLO, then does what {@code script} says; returns what the client sent last. */
    private CompletableFuture<CorProtoCodec.Problem> fakeServer(Script script) throws IOException {
        fake = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        CompletableFuture<CorProtoCodec.Problem> goAway = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (Socket s = fake.accept()) {
                s.setSoTimeout(5000);
                DataInputStream in = new DataInputStream(s.getInputStream());
                CorProtoCodec reader = new CorProtoCodec();
                assertEquals(CorProtoCodec.HELLO, readFrame(in, reader));
                reader.readHello();
                script.run(s, in, reader);
                // What the client says last: its GOAWAY.
                CorProtoCodec any = CorProtoCodec.open(CorProtoCodec.HARD_MAX_FRAME, CorProtoCodec.DEFAULT_NAME_TABLE);
                int t;
                while ((t = readFrame(in, any)) != CorProtoCodec.GOAWAY) {
                    assertTrue(t > 0);
                }
                goAway.complete(any.readGoAway());
            } catch (Throwable e) {
                goAway.completeExceptionally(e);
            }
        });
        return goAway;
    }

    interface Script {
        void run(Socket s, DataInputStream in, CorProtoCodec reader) throws Exception;
    }

    private static void write(Socket s, CorProtoCodec c) throws IOException {
        s.getOutputStream().write(ProtoFixture.drain(c));
        s.getOutputStream().flush();
    }

    private static CorProtoException failureOf(CompletableFuture<?> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        return assertInstanceOf(CorProtoException.class, e.getCause());
    }

    @Test
    void aHelloAckWithLimitsLargerThanOfferedGetsGoAwayProtocolError() throws Exception { // spec § 4.2
        CompletableFuture<CorProtoCodec.Problem> goAway = fakeServer((s, in, reader) -> {
            CorProtoCodec w = new CorProtoCodec();
            w.writeHelloAck(CorProtoCodec.HARD_MAX_FRAME, 16, 16, "liar"); // the client offered 64 KiB
            write(s, w);
        });
        CorCoLoop loop = fx.loop("client-violation");
        CorProtoClient client = fx.client(b -> b.maxFrameBytes(64 << 10));
        CorProtoException e = failureOf(LoopTesting.coroutine(loop,
                () -> client.send("GET", "127.0.0.1", fake.getLocalPort(), "/", null, null, null, null)));
        assertEquals(CorProtoException.Kind.PROTOCOL, e.kind(), e.getMessage());
        assertEquals(CorProtoError.PROTOCOL_ERROR, goAway.get(10, TimeUnit.SECONDS).code());
        assertEquals(0, ProtoFixture.liveCoroutines(loop));
    }

    @Test
    void anAnswerOnAStreamNotInFlightGetsGoAwayAndFailsTheWaitersAtOnce() throws Exception { // spec § 8.3
        CompletableFuture<CorProtoCodec.Problem> goAway = fakeServer((s, in, reader) -> {
            CorProtoCodec w = new CorProtoCodec();
            w.writeHelloAck(64 << 10, 16, 16, "confused");
            write(s, w);
            reader.agree(64 << 10, 16);
            assertEquals(CorProtoCodec.REQUEST, readFrame(in, reader));
            int asked = reader.stream();
            CorProtoCodec answers = CorProtoCodec.open(64 << 10, 16);
            answers.writeResponse(asked + 1000, 200, null, null, null);
            write(s, answers);
        });
        CorCoLoop loop = fx.loop("client-violation");
        CorProtoClient client = fx.client(b -> b.maxFrameBytes(64 << 10).requestTimeoutMs(5000));
        long t0 = System.nanoTime();
        CorProtoException e = failureOf(LoopTesting.coroutine(loop,
                () -> client.send("GET", "127.0.0.1", fake.getLocalPort(), "/", null, null, null, null)));
        assertTrue((System.nanoTime() - t0) / 1_000_000 < 3000, "failed at once, not at its deadline");
        assertEquals(CorProtoException.Kind.PROTOCOL, e.kind(), e.getMessage());
        CorProtoCodec.Problem p = goAway.get(10, TimeUnit.SECONDS);
        assertEquals(CorProtoError.PROTOCOL_ERROR, p.code());
        assertTrue(p.reason().contains("not in flight"), p.reason());
        assertEquals(0, ProtoFixture.liveCoroutines(loop));
    }

    @Test
    void garbageInsteadOfHelloAckGetsGoAwayWithItsCode() throws Exception { // spec § 3.2
        CompletableFuture<CorProtoCodec.Problem> goAway = fakeServer((s, in, reader) -> {
            s.getOutputStream().write(new byte[] {0, 0, 0, 0, 77, 0, 0, 0, 0, 0}); // type 77
            s.getOutputStream().flush();
        });
        CorProtoClient client = fx.client(b -> b);
        CorProtoException e = assertThrows(CorProtoException.class,
                () -> client.send("GET", "127.0.0.1", fake.getLocalPort(), "/", null, null, null, null));
        assertEquals(CorProtoException.Kind.PROTOCOL, e.kind());
        assertEquals(CorProtoError.UNKNOWN_TYPE, goAway.get(10, TimeUnit.SECONDS).code());
    }
}
