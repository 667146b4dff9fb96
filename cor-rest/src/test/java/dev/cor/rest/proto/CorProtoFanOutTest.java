package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Concurrent fan-out: requests to several peers awaited together (spec § 9.2; history § 11). */
class CorProtoFanOutTest {
    private final ProtoFixture fx = new ProtoFixture();

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    private CorProtoServer slowPeer(String name) throws Exception {
        return fx.server(request -> {
            CorCo.sleep(1000);
            request.respond(200, "text/plain", name.getBytes());
        }, b -> b.name(name), fx.loop(name));
    }

    @Test
    void twoOneSecondPeersAwaitedTogetherFromOneCoroutineTakeAboutOneSecond() throws Exception {
        CorProtoServer a = slowPeer("peer-a");
        CorProtoServer b = slowPeer("peer-b");
        CorCoLoop clientLoop = fx.loop("fanout-client");
        CorProtoClient client = fx.client(c -> c);
        String got = LoopTesting.inCoroutine(clientLoop, () -> {
            long t0 = System.nanoTime();
            CorProtoCall ca = client.start("GET", "127.0.0.1", a.port(), "/slow", null, null, null, null);
            CorProtoCall cb = client.start("GET", "127.0.0.1", b.port(), "/slow", null, null, null, null);
            CorProtoCall.awaitAll(ca, cb);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            return new String(ca.response().body()) + "+" + new String(cb.response().body()) + " in " + ms;
        });
        long ms = Long.parseLong(got.substring(got.indexOf(" in ") + 4));
        assertTrue(got.startsWith("peer-a+peer-b"), got);
        assertTrue(ms >= 950 && ms < 1800, "about one second, not two: " + got);
        assertEquals(0, ProtoFixture.liveCoroutines(clientLoop));
    }

    @Test
    void twoOneSecondPeersAwaitedTogetherFromAPlainThreadTakeAboutOneSecond() throws Exception {
        CorProtoServer a = slowPeer("peer-c");
        CorProtoServer b = slowPeer("peer-d");
        CorProtoClient client = fx.client(c -> c);
        long t0 = System.nanoTime();
        List<CorProtoCall> calls = List.of(
                client.start("GET", "127.0.0.1", a.port(), "/slow", null, null, null, null),
                client.start("GET", "127.0.0.1", b.port(), "/slow", null, null, null, null));
        CorProtoCall.awaitAll(calls);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals("peer-c", new String(calls.get(0).response().body()));
        assertEquals("peer-d", new String(calls.get(1).response().body()));
        assertTrue(ms >= 950 && ms < 1800, "about one second, not two: " + ms + " ms");
    }
}
