package dev.cor.rest;

import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import org.junit.jupiter.api.Test;

class CorRestTest {
    @Test
    void aJsonBodyIsParsedOnceOnFirstUse() {
        CorRest r = CorRest.builder("POST", "/entities").header("content-type", "application/ld+json; charset=utf-8")
                .body("{\"id\":\"urn:ngsi-ld:X:1\"}").build();
        assertTrue(r.isJson());
        JsonNode first = r.json();
        assertEquals("urn:ngsi-ld:X:1", first.get("id").asText());
        assertSame(first, r.json(), "the same tree, not parsed again");
    }

    @Test
    void aBodyThatArrivedParsedIsNotParsedAgain() {
        JsonNode tree = CorRestJson.mapper().createObjectNode().put("id", "a");
        CorRest r = CorRest.builder("POST", "/x").json(tree).build();
        assertSame(tree, r.json());
        assertTrue(r.isJson());
    }

    @Test
    void invalidJsonIsA400WithTheParserReason() {
        CorRest r = CorRest.builder("POST", "/x").header("Content-Type", "application/json").body("{\"id\": ").build();
        CorRestException e = assertThrows(CorRestException.class, r::json);
        assertEquals(400, e.status());
        assertTrue(e.detail().startsWith("the body is not valid JSON"), e.detail());
    }

    @Test
    void aStatusOutside100To599IsRefusedAtRespondNamingIt() {
        CorRest r = CorRest.builder("GET", "/x").build();
        for (int bad : new int[] {0, 99, 600, 1000, -200}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> r.respond(bad, "text/plain", new byte[1]));
            assertTrue(e.getMessage().contains(String.valueOf(bad)), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> r.respondJson(bad, CorRestJson.mapper().createObjectNode()));
        }
        assertEquals(200, r.status(), "a refused status leaves the response as it was");
        assertEquals(100, r.respond(100, null, null).status());
        assertEquals(599, r.respond(599, null, null).status());
    }

    @Test
    void aCorRestExceptionWithAStatusOutside100To599IsRefusedNamingIt() {
        for (int bad : new int[] {0, 99, 600, 700}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new CorRestException(bad, "T", "d"));
            assertTrue(e.getMessage().contains(String.valueOf(bad)), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new CorRestException(bad, "about:blank", "T", "d", null));
        }
        assertEquals(599, new CorRestException(599, "T", "d").status());
    }

    @Test
    void aBodyThatIsNotJsonHasNoTree() {
        CorRest r = CorRest.builder("POST", "/x").header("Content-Type", "text/plain").body("{}").build();
        assertFalse(r.isJson());
        assertNull(r.json());
    }

    @Test
    void aSecondRespondReplacesTheFirstContentTypeIncluded() {
        CorRest r = CorRest.builder("GET", "/x").build();
        r.respond(200, "text/plain", "first".getBytes());
        r.respond(204, null, null);
        assertEquals(204, r.status());
        assertNull(r.responseHeaders().get("Content-Type"), "the first answer's content type stayed");
        assertEquals(0, r.responseBody().length);
    }

    @Test
    void queryParametersArePercentDecoded() {
        CorRest r = CorRest.builder("GET", "/entities").query("type=Room&q=temp%3E20&flag").build();
        assertEquals("Room", r.queryParam("type"));
        assertEquals("temp>20", r.queryParam("q"));
        assertEquals("", r.queryParam("flag"));
        assertNull(r.queryParam("missing"));
    }

    @Test
    void theForwardDepthGuardRefusesPastItsBound() {
        CorRestState s = CorRest.builder("GET", "/").build().state();
        assertTrue(s.enterForward(2));
        assertTrue(s.enterForward(2));
        assertFalse(s.enterForward(2), "a third nested forward is refused");
        assertEquals(2, s.forwardDepth());
        s.exitForward();
        assertTrue(s.enterForward(2));
    }

    @Test
    void waitFdOnAPlainThreadBlocksUntilTheChannelIsReady() throws Exception {
        Pipe p = Pipe.open();
        p.source().configureBlocking(false);
        Thread writer = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(100);
                p.sink().write(ByteBuffer.wrap(new byte[] {1}));
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        long t0 = System.nanoTime();
        int ops = CorRest.waitFd(p.source(), SelectionKey.OP_READ, 5000);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        writer.join();
        assertEquals(SelectionKey.OP_READ, ops);
        assertTrue(ms >= 80, "blocked " + ms + " ms");
        Pipe quiet = Pipe.open();
        quiet.source().configureBlocking(false);
        assertEquals(0, CorRest.waitFd(quiet.source(), SelectionKey.OP_READ, 50), "a timeout is 0");
        for (Pipe x : new Pipe[] {p, quiet}) {
            x.source().close();
            x.sink().close();
        }
    }

    @Test
    void waitFdInsideACoroutineIsTheLoopsWaitAndRefusedOnTheLoopOutsideOne() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().build().start();
        Pipe p = Pipe.open();
        p.source().configureBlocking(false);
        try {
            Throwable outside = onLoop(loop, () -> {
                try {
                    CorRest.waitFd(p.source(), SelectionKey.OP_READ, 10);
                    return null;
                } catch (IllegalStateException e) {
                    return e;
                }
            });
            assertInstanceOf(IllegalStateException.class, outside);
            assertTrue(outside.getMessage().contains("a loop never blocks"), outside.getMessage());

            CompletableFuture<Integer> ops = new CompletableFuture<>();
            onLoop(loop, () -> CorCo.start(() -> CorRest.waitFd(p.source(), SelectionKey.OP_READ, 5000),
                    co -> ops.complete((Integer) co.result())));
            assertEquals(1, (int) onLoop(loop, loop::liveCoroutines), "suspended in the loop's wait");
            p.sink().write(ByteBuffer.wrap(new byte[] {1}));
            assertEquals(SelectionKey.OP_READ, ops.get(5, TimeUnit.SECONDS));
        } finally {
            LoopTesting.stop(loop);
            p.source().close();
            p.sink().close();
        }
    }

    @Test
    void aTokenIsFoundInACommaSeparatedFieldWhateverItsCaseAndSpacesAndOnlyWhole() {
        CorRestHeaders h = new CorRestHeaders().add("Connection", "keep-alive").add("connection", " Upgrade ,  CLOSE ");
        assertTrue(h.hasToken("Connection", "close"));
        assertTrue(h.hasToken("CONNECTION", "upgrade"));
        assertTrue(h.hasToken("Connection", "keep-alive"));
        assertFalse(h.hasToken("Connection", "clos"), "a prefix of a token is not the token");
        assertFalse(h.hasToken("Connection", "close,"));
        assertFalse(h.hasToken("Transfer-Encoding", "close"), "another field");
        assertFalse(new CorRestHeaders().add("Connection", "").hasToken("Connection", "close"));
        assertTrue(new CorRestHeaders().add("Connection", ",,close").hasToken("Connection", "close"));
    }
}
