package dev.cor.rest.proto;

import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestDispatcher;
import dev.cor.rest.CorRestWorkers;

/**
 * Test helper: loops, servers and clients that are all stopped at the end, and ways to run code
 * on a loop - plainly or as a coroutine - and wait for its value.
 */
final class ProtoFixture implements AutoCloseable {
    /** A handler that may wait: every request is a coroutine. */
    interface Handler {
        void handle(CorRest request) throws Exception;
    }

    private final List<CorCoLoop> loops = new ArrayList<>();
    private final List<CorProtoServer> servers = new ArrayList<>();
    private final List<CorProtoClient> clients = new ArrayList<>();
    final CorRestWorkers workers = CorRestWorkers.create("proto-test-worker", 2, 64);

    CorCoLoop loop(String name) {
        CorCoLoop l = CorCoLoop.builder().name(name).build().start();
        loops.add(l);
        return l;
    }

    static CorRestDispatcher dispatcher(CorRestWorkers workers, Handler handler) {
        CorRestApplication app = new CorRestApplication() {
            @Override
            public boolean canWait(CorRest request) {
                return true;
            }

            @Override
            public void handle(CorRest request) throws Exception {
                handler.handle(request);
            }
        };
        return CorRestDispatcher.builder().application(app).coroutineHook(r -> true).workers(workers).build();
    }

    CorProtoServer server(Handler handler, UnaryOperator<CorProtoServer.Builder> config, CorCoLoop... on) throws Exception {
        CorProtoServer s = config.apply(CorProtoServer.builder().name("test-server").loops(on)
                .dispatcher(dispatcher(workers, handler))).build().start();
        servers.add(s);
        return s;
    }

    CorProtoServer server(Handler handler, CorCoLoop... on) throws Exception {
        return server(handler, b -> b, on);
    }

    CorProtoClient client(UnaryOperator<CorProtoClient.Builder> config) {
        CorProtoClient c = config.apply(CorProtoClient.builder().name("test-client")).build();
        clients.add(c);
        return c;
    }

    // ---------------------------------------------------------------- bytes on the wire

    /** Everything {@code c} has encoded, taken out of it. */
    static byte[] drain(CorProtoCodec c) {
        ByteBuffer b = ByteBuffer.allocate(c.pendingOutput());
        c.drainTo(b);
        return b.array();
    }

    /** A frame header (spec § 3.1) with whatever fields a test wants, valid or not. */
    static byte[] header(long length, int type, int flags, int stream) {
        return ByteBuffer.allocate(CorProtoCodec.HEADER_BYTES).putInt((int) length).put((byte) type).put((byte) flags)
                .putInt(stream).array();
    }

    /** Reads one whole frame from a blocking stream into {@code into} and steps to it; returns its type. */
    static int readFrame(DataInputStream in, CorProtoCodec into) throws IOException {
        byte[] head = new byte[CorProtoCodec.HEADER_BYTES];
        in.readFully(head);
        byte[] payload = new byte[ByteBuffer.wrap(head).getInt()];
        in.readFully(payload);
        into.receive(ByteBuffer.wrap(head));
        into.receive(ByteBuffer.wrap(payload));
        return into.nextFrame();
    }

    /** Polls {@code condition} every 10 ms until it holds; fails naming {@code what} after 10 s. */
    static void eventually(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - until > 0) {
                throw new AssertionError("not within 10 s: " + what);
            }
            Thread.sleep(10);
        }
    }

    static long msSince(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** Runs {@code task} in a coroutine of {@code loop}, or here on the calling thread. */
    static <T> T run(CorCoLoop loop, boolean fromThread, CorCoTask task) throws Exception {
        if (fromThread) {
            @SuppressWarnings("unchecked")
            T t = (T) task.run();
            return t;
        }
        return LoopTesting.inCoroutine(loop, task);
    }

    /** An answer's body as UTF-8 text. */
    static String body(CorProtoResponse r) {
        return new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
    }

    static int liveCoroutines(CorCoLoop loop) throws Exception {
        return LoopTesting.onLoop(loop, loop::liveCoroutines);
    }

    @Override
    public void close() throws Exception {
        for (CorProtoClient c : clients) {
            c.close();
        }
        for (CorProtoServer s : servers) {
            s.stop();
        }
        for (CorCoLoop l : loops) {
            l.stop();
        }
        for (CorCoLoop l : loops) {
            if (!l.awaitTermination(10, TimeUnit.SECONDS)) {
                throw new AssertionError(l.name() + " did not end");
            }
        }
        workers.close();
    }
}
