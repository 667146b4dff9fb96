package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestDispatcher;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime's JFR events, recorded from a real run and read back from the recording file with
 * {@link RecordingFile}: the worker hop and its reason, a long-lived coroutine with its request's
 * method and path, the cor:// connection's life on both sides, and the watchdog's stalled loop.
 */
class CorJfrEventsTest {
    @TempDir
    Path dir;

    @Test
    void aRecordedRunHoldsTheRuntimesEvents() throws Exception {
        List<RecordedEvent> events;
        try (ProtoFixture fx = new ProtoFixture(); Recording rec = new Recording()) {
            rec.enable("dev.cor.Hop");
            rec.enable("dev.cor.LongCoroutine").withThreshold(Duration.ofMillis(300));
            rec.enable("dev.cor.ProtoConnection");
            rec.enable("dev.cor.LoopStall");
            rec.start();

            // One coroutine at a time on the server's loop; /hop may never be one.
            CorCoLoop serverLoop = CorCoLoop.builder().name("jfr-server").coroutineCap(1).build().start();
            CorRestApplication app = new CorRestApplication() {
                @Override
                public boolean canWait(CorRest r) {
                    return true;
                }

                @Override
                public void handle(CorRest r) throws Exception {
                    if (r.path().equals("/slow")) {
                        CorCo.sleep(600);
                    } else if (r.path().equals("/quick")) {
                        CorCo.sleep(1);
                    }
                    r.respond(200, "text/plain", r.path().getBytes(StandardCharsets.UTF_8));
                }
            };
            CorRestDispatcher dispatcher = CorRestDispatcher.builder().application(app)
                    .coroutineHook(r -> !r.path().equals("/hop")).workers(fx.workers).build();
            CorProtoServer server = CorProtoServer.builder().name("jfr-server").loops(serverLoop).dispatcher(dispatcher).build().start();
            CorCoLoop clientLoop = fx.loop("jfr-client");
            CorProtoClient client = fx.client(b -> b);
            try {
                int port = server.port();
                List<String> got = LoopTesting.inCoroutine(clientLoop, () -> {
                    CorProtoCall slow = client.start("GET", "127.0.0.1", port, "/slow", null, null, null, null, 5000);
                    CorProtoCall capped = client.start("GET", "127.0.0.1", port, "/capped", null, null, null, null, 5000);
                    CorProtoCall hop = client.start("GET", "127.0.0.1", port, "/hop", null, null, null, null, 5000);
                    CorProtoCall.awaitAll(slow, capped, hop);
                    CorProtoCall quick = client.start("GET", "127.0.0.1", port, "/quick", null, null, null, null, 5000);
                    return List.of(body(slow), body(capped), body(hop), body(quick));
                });
                assertEquals(List.of("/slow", "/capped", "/hop", "/quick"), got);
                client.close(); // GOAWAY NO_ERROR from the client
                ProtoFixture.eventually("the server saw the client go", () -> server.connectionsOpen() == 0);

                // A loop blocked past its watchdog threshold (on purpose: this is what the watchdog is for).
                CorCoLoop blocked = CorCoLoop.builder().name("jfr-blocked").watchdogMs(100).build().start();
                try {
                    LoopTesting.onLoop(blocked, () -> {
                        Thread.sleep(400);
                        return null;
                    });
                } finally {
                    LoopTesting.stop(blocked);
                }
            } finally {
                server.stop();
                LoopTesting.stop(serverLoop);
            }
            rec.stop();
            Path file = dir.resolve("run.jfr");
            rec.dump(file);
            assertTrue(Files.size(file) > 0);
            events = RecordingFile.readAllEvents(file);
        }

        List<RecordedEvent> hops = named(events, "dev.cor.Hop");
        assertEquals(Set.of("/capped the coroutine cap was reached", "/hop the hook said no"),
                hops.stream().map(e -> e.getString("path") + " " + e.getString("reason")).collect(Collectors.toSet()));

        List<RecordedEvent> longOnes = named(events, "dev.cor.LongCoroutine");
        assertEquals(1, longOnes.size(), "only /slow lived past 300 ms: " + longOnes);
        RecordedEvent slow = longOnes.get(0);
        assertEquals("GET /slow", slow.getString("method") + " " + slow.getString("path"));
        assertTrue(slow.getDuration().toMillis() >= 550, slow.getDuration().toString());

        Set<String> conn = new TreeSet<>();
        for (RecordedEvent e : named(events, "dev.cor.ProtoConnection")) {
            conn.add(e.getString("side") + " " + e.getString("what") + (e.getString("code") != null && e.getString("what").startsWith("GOAWAY") ? " " + e.getString("code") : ""));
        }
        assertTrue(conn.containsAll(Set.of("client opened", "server opened", "client GOAWAY sent NO_ERROR",
                "server GOAWAY received NO_ERROR", "client closed", "server closed")), conn.toString());

        List<RecordedEvent> stalls = named(events, "dev.cor.LoopStall");
        assertEquals(1, stalls.size(), stalls.toString());
        assertEquals("jfr-blocked", stalls.get(0).getString("loop"));
        assertTrue(stalls.get(0).getLong("awayMs") >= 100);
        assertTrue(stalls.get(0).getString("where").contains("sleep"), stalls.get(0).getString("where"));
    }

    private static String body(CorProtoCall c) throws CorProtoException {
        return new String(c.await().body(), StandardCharsets.UTF_8);
    }

    private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name)).toList();
    }
}
