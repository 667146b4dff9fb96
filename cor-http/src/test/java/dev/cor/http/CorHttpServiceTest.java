package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.cor.base.CorCoLoop;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestCoroutineHook;
import dev.cor.rest.CorRestFinishCoroutineHook;
import dev.cor.rest.CorRestService;
import org.junit.jupiter.api.Test;

/** A service mounted in one call: its application and hooks serve, and it is told of the start and the stop. */
class CorHttpServiceTest {

    /** Records what the server tells it; its hooks let every request wait as a coroutine. */
    private static final class RecordingService implements CorRestService {
        final List<String> events = new CopyOnWriteArrayList<>();
        volatile List<CorCoLoop> loops;
        volatile boolean loopsEndedWhenStopped;

        @Override
        public CorRestApplication application() {
            return new TestApp();
        }

        @Override
        public CorRestCoroutineHook coroutineHook() {
            return r -> true;
        }

        @Override
        public CorRestFinishCoroutineHook finishCoroutineHook() {
            return r -> true;
        }

        @Override
        public void started(List<CorCoLoop> loops) {
            this.loops = loops;
            events.add("started");
        }

        @Override
        public void stopped() {
            loopsEndedWhenStopped = loops.stream().allMatch(CorCoLoop::isTerminated);
            events.add("stopped");
        }
    }

    private static HttpResponse<String> get(CorHttpServer s, String path) throws Exception {
        try (HttpClient c = HttpClient.newHttpClient()) {
            return c.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path)).build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void theServiceServesWithItsHooksAndIsToldOfTheStartAndOfTheStopOnce() throws Exception {
        RecordingService svc = new RecordingService();
        CorHttpServer s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(2).service(svc).build().start();
        try {
            assertEquals(List.of("started"), svc.events, "told once, before start() returns");
            assertEquals(s.loops(), svc.loops);
            HttpResponse<String> r = get(s, "/slow?ms=20");
            assertEquals(200, r.statusCode());
            assertEquals("slept 20", r.body());
            assertEquals(1, s.coroutineCount(), "the service's hook made the waiting request a coroutine");
            assertEquals(0, s.hopCount());
        } finally {
            s.stop(1000);
        }
        assertEquals(List.of("started", "stopped"), svc.events);
        assertTrue(svc.loopsEndedWhenStopped, "stopped() comes once no request can run any more");
        s.stop(1000);
        assertEquals(List.of("started", "stopped"), svc.events, "a second stop tells nothing more");
    }

    @Test
    void anApplicationSetAfterTheServiceWrapsIt() throws Exception {
        RecordingService svc = new RecordingService();
        CorRestApplication inner = svc.application();
        CorRestApplication wrapper = new CorRestApplication() {
            @Override
            public boolean canWait(dev.cor.rest.CorRest r) {
                return inner.canWait(r);
            }

            @Override
            public void handle(dev.cor.rest.CorRest r) throws Exception {
                if (r.path().equals("/wrapped")) {
                    r.respond(200, "text/plain", "by the host".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                } else {
                    inner.handle(r);
                }
            }
        };
        CorHttpServer s = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).service(svc).application(wrapper)
                .build().start();
        try {
            assertEquals("by the host", get(s, "/wrapped").body());
            assertEquals("slept 5", get(s, "/slow?ms=5").body());
            assertEquals(1, s.coroutineCount(), "the service's hooks stay");
        } finally {
            s.stop(1000);
        }
        assertEquals(List.of("started", "stopped"), svc.events);
    }
}
