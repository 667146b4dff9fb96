package dev.cor.ngsild.ld;

import static dev.cor.base.testing.LoopTesting.coroutine;
import static dev.cor.base.testing.LoopTesting.get;
import static dev.cor.base.testing.LoopTesting.inCoroutine;
import static dev.cor.base.testing.LoopTesting.onLoop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LoopTesting;
import dev.cor.ngsild.ManualClock;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.policy.ContextLimits;
import dev.cor.rest.client.CorRestClient;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The cache of remote {@code @context} documents over real sockets (issue 12, "@context"; ETSI
 * GS CIM 009 § 5.5.6, § 5.13.1): one download per URL whoever needs it - two coroutines of one
 * loop included, neither told its context is cyclic (history § 8) -, a server that hangs answered
 * LdContextNotAvailable within the timeout while the loop serves on, garbage, huge bodies, cycles
 * and 404s, the negative cache, the TTL and the bounds (an injectable clock, no sleeps).
 */
class ContextCacheTest {
    private static final String DOC = "{\"@context\": {\"Vehicle\": \"https://example.org/Vehicle\", \"speed\": \"https://example.org/speed\"}}";

    private final List<CorCoLoop> loops = new ArrayList<>();
    private ContextServer server;
    private CorRestClient client;
    private final ManualClock clock = new ManualClock(1_800_000_000_000L);

    @BeforeEach
    void start() throws Exception {
        server = new ContextServer();
        client = CorRestClient.builder().build();
    }

    @AfterEach
    void stop() throws Exception {
        for (CorCoLoop l : loops) {
            LoopTesting.stop(l);
        }
        client.close();
        server.close();
    }

    private CorCoLoop loop() {
        CorCoLoop l = LoopTesting.start("ctx-test-" + loops.size(), 64);
        loops.add(l);
        return l;
    }

    private LdContexts.Builder contexts() {
        return LdContexts.builder().client(client).clock(clock).timeoutMs(5_000);
    }

    // ---------------------------------------------------------------- one download, whoever needs it

    /** Why {@code e} was raised, as the operator's log has it (the answer never says). */
    private static String reason(NgsiLdException e) {
        ContextDocuments.Reason r = ContextDocuments.reasonOf(e);
        assertNotNull(r, () -> "no reason kept with " + e.detail());
        return r.getMessage();
    }

    @Test
    void cor_coroutine_context_download_shared() throws Exception {
        // two coroutines of ONE loop need the same uncached context: one download, both succeed, neither is told "cyclic"
        server.put("/shared.jsonld", new ContextServer.Reply(200, Map.of(), DOC.getBytes(StandardCharsets.UTF_8), 300, false));
        LdContexts contexts = contexts().build();
        CorCoLoop loop = loop();
        ContextRef ref = ContextRef.link(server.url("/shared.jsonld"));
        List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<String> first = coroutine(loop, () -> {
            order.add("first waits");
            String iri = contexts.resolve(ref, 5_000).expand("Vehicle");
            order.add("first done");
            return iri;
        });
        CompletableFuture<String> second = coroutine(loop, () -> {
            order.add("second waits");
            String iri = contexts.resolve(ref, 5_000).expand("speed");
            order.add("second done");
            return iri;
        });
        assertEquals("https://example.org/Vehicle", get(first));
        assertEquals("https://example.org/speed", get(second));
        assertEquals(1, server.hits("/shared.jsonld"), "one download for both");
        assertEquals(1, contexts.stats().downloads());
        assertEquals(List.of("first waits", "second waits"), order.subList(0, 2), "both waited at once: " + order);
        assertEquals(2, contexts.stats().misses(), "both had to wait for the download");
        assertEquals(ContextDocuments.ACCEPT, server.accept("/shared.jsonld"));
    }

    @Test
    void coroutines_of_two_loops_and_a_worker_share_one_download() throws Exception {
        server.put("/three.jsonld", new ContextServer.Reply(200, Map.of(), DOC.getBytes(StandardCharsets.UTF_8), 300, false));
        LdContexts contexts = contexts().build();
        ContextRef ref = ContextRef.link(server.url("/three.jsonld"));
        CompletableFuture<String> a = coroutine(loop(), () -> contexts.resolve(ref, 5_000).expand("Vehicle"));
        CompletableFuture<String> b = coroutine(loop(), () -> contexts.resolve(ref, 5_000).expand("Vehicle"));
        // a worker (a plain thread) joins the download one of the loops started, and blocks with its deadline
        CompletableFuture<String> worker = CompletableFuture.supplyAsync(() -> contexts.resolve(ref, 5_000).expand("Vehicle"));
        for (CompletableFuture<String> f : List.of(a, b, worker)) {
            assertEquals("https://example.org/Vehicle", get(f));
        }
        assertEquals(1, server.hits("/three.jsonld"));
    }

    @Test
    void a_coroutine_waits_for_the_download_a_worker_started() throws Exception {
        server.put("/w.jsonld", new ContextServer.Reply(200, Map.of(), DOC.getBytes(StandardCharsets.UTF_8), 400, false));
        LdContexts contexts = contexts().build();
        ContextRef ref = ContextRef.link(server.url("/w.jsonld"));
        CompletableFuture<String> worker = CompletableFuture.supplyAsync(() -> contexts.resolve(ref, 5_000).expand("speed"));
        long until = System.nanoTime() + 10_000_000_000L;
        while (server.hits("/w.jsonld") == 0 && System.nanoTime() < until) {
            Thread.onSpinWait(); // the worker's request is on its way
        }
        assertEquals(1, server.hits("/w.jsonld"), "the worker started the download");
        CompletableFuture<String> co = coroutine(loop(), () -> contexts.resolve(ref, 5_000).expand("speed"));
        assertEquals("https://example.org/speed", get(co));
        assertEquals("https://example.org/speed", get(worker));
        assertEquals(1, server.hits("/w.jsonld"));
    }

    // ---------------------------------------------------------------- failures

    @Test
    void a_server_that_hangs_is_LdContextNotAvailable_within_the_timeout_while_the_loop_serves_on() throws Exception {
        server.put("/hang.jsonld", new ContextServer.Reply(200, Map.of(), new byte[0], 0, true));
        LdContexts contexts = contexts().build();
        CorCoLoop loop = loop();
        AtomicLong otherRanAt = new AtomicLong();
        long[] window = new long[2];
        CompletableFuture<NgsiLdException> waiting = coroutine(loop, () -> {
            window[0] = System.nanoTime();
            try {
                contexts.resolve(ContextRef.link(server.url("/hang.jsonld")), 300);
                return null;
            } catch (NgsiLdException e) {
                return e;
            } finally {
                window[1] = System.nanoTime();
            }
        });
        // another task of the same loop, started while the first waits: it must run during the wait
        CompletableFuture<Object> other = coroutine(loop, () -> {
            CorCo.sleep(50);
            otherRanAt.set(System.nanoTime());
            return null;
        });
        NgsiLdException e = get(waiting);
        get(other);
        assertNotNull(e, "the hanging context must fail");
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        assertTrue(e.detail().contains(server.url("/hang.jsonld")), e.detail());
        long waitedMs = (window[1] - window[0]) / 1_000_000;
        assertTrue(waitedMs >= 250 && waitedMs < 3_000, "answered after " + waitedMs + " ms, the timeout being 300");
        assertTrue(otherRanAt.get() > window[0] && otherRanAt.get() < window[1], "the loop ran another task during the wait");
    }

    @Test
    void a_document_that_is_not_json_is_LdContextNotAvailable_and_is_not_fetched_again_within_the_negative_window() throws Exception {
        server.put("/garbage.jsonld", new ContextServer.Reply(200, Map.of(), "this is { not json".getBytes(StandardCharsets.UTF_8), 0, false));
        LdContexts contexts = contexts().limits(ContextLimits.builder().negativeTtlMs(10_000).build()).build();
        ContextRef ref = ContextRef.link(server.url("/garbage.jsonld"));
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> contexts.resolve(ref, 5_000));
        // § 5.5.6 says BadRequestData (556_01_02): one answer for every unusable source instead (doc/broker.md)
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        assertTrue(reason(e).contains("not JSON"), reason(e));
        // within the window: the same answer, decided without waiting and without a download
        assertFalse(contexts.needsDownload(ref));
        assertNull(contexts.cached(ref));
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, assertThrows(NgsiLdException.class, () -> contexts.resolve(ref, 5_000)).type());
        assertEquals(1, server.hits("/garbage.jsonld"));
        assertEquals(1, contexts.stats().failures());
    }

    @Test
    void a_document_without_a_context_member_is_LdContextNotAvailable() throws Exception {
        server.put("/noctx.jsonld", "{\"note\": \"no context member here\"}"); // 556_01_01
        LdContexts contexts = contexts().build();
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> contexts.resolve(ContextRef.link(server.url("/noctx.jsonld")), 5_000));
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        assertTrue(reason(e).contains("no top-level @context"), reason(e));
    }

    @Test
    void a_huge_document_is_LdContextNotAvailable() throws Exception {
        byte[] big = ("{\"@context\": {\"a\": \"" + "x".repeat(20_000) + "\"}}").getBytes(StandardCharsets.UTF_8);
        server.put("/huge.jsonld", new ContextServer.Reply(200, Map.of(), big, 0, false));
        LdContexts contexts = contexts().limits(ContextLimits.builder().maxDocumentBytes(4_096).build()).build();
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> contexts.resolve(ContextRef.link(server.url("/huge.jsonld")), 5_000));
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        assertTrue(reason(e).contains("over the limit"), reason(e));
        assertEquals(0, contexts.stats().entries());
    }

    @Test
    void a_404_is_LdContextNotAvailable_naming_the_url_and_logging_the_status() throws Exception {
        LdContexts contexts = contexts().build();
        String url = server.url("/nowhere.jsonld");
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> contexts.resolve(ContextRef.link(url), 5_000));
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        assertTrue(e.detail().contains(url) && !e.detail().contains("404"), e.detail());
        assertTrue(reason(e).contains("404"), reason(e));
    }

    @Test
    void a_server_that_refuses_the_connection_is_LdContextNotAvailable() throws Exception {
        LdContexts contexts = contexts().build();
        String url = server.url("/x.jsonld");
        server.close();
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> contexts.resolve(ContextRef.link(url), 5_000));
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        server = new ContextServer();
    }

    @Test
    void a_real_cycle_is_LdContextNotAvailable_for_the_request_that_has_it() throws Exception {
        server.put("/a.jsonld", "{\"@context\": [\"b.jsonld\", {\"a\": \"https://example.org/a\"}]}");
        server.put("/b.jsonld", "{\"@context\": [\"a.jsonld\", {\"b\": \"https://example.org/b\"}]}");
        LdContexts contexts = contexts().build();
        NgsiLdException e = inCoroutine(loop(), () -> {
            try {
                contexts.resolve(ContextRef.link(server.url("/a.jsonld")), 5_000);
                return null;
            } catch (NgsiLdException x) {
                return x;
            }
        });
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        assertFalse(e.detail().contains("/b.jsonld"), "names only the URL the request gave: " + e.detail());
        assertTrue(reason(e).contains("cyclic") && reason(e).contains("/a.jsonld → ") && reason(e).contains("/b.jsonld"), reason(e));
        assertEquals(1, server.hits("/a.jsonld"));
        assertEquals(1, server.hits("/b.jsonld"));
        // the documents are good, the cycle is the request's: both stay cached, no new download for another request
        assertEquals(2, contexts.stats().entries());
    }

    @Test
    void a_download_follows_redirects_and_resolves_relative_references_against_where_it_ended() throws Exception {
        server.put("/moved.jsonld", new ContextServer.Reply(302, Map.of("Location", "/dir/real.jsonld"), new byte[0], 0, false));
        server.put("/dir/real.jsonld", "{\"@context\": [\"sibling.jsonld\", {\"a\": \"https://example.org/a\"}]}");
        server.put("/dir/sibling.jsonld", "{\"@context\": {\"s\": \"https://example.org/s\"}}");
        server.put("/loop.jsonld", new ContextServer.Reply(301, Map.of("Location", "/loop.jsonld"), new byte[0], 0, false));
        LdContexts contexts = contexts().limits(ContextLimits.builder().maxRedirects(3).build()).build();
        LdContext c = contexts.resolve(ContextRef.link(server.url("/moved.jsonld")), 5_000);
        assertEquals("https://example.org/s", c.expand("s"));
        NgsiLdException e = assertThrows(NgsiLdException.class, () -> contexts.resolve(ContextRef.link(server.url("/loop.jsonld")), 5_000));
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        assertTrue(reason(e).contains("redirected more than 3"), reason(e));
        assertEquals(4, server.hits("/loop.jsonld"));
    }

    // ---------------------------------------------------------------- what is cached, and for how long

    @Test
    void needsDownload_and_cached_tell_what_a_request_can_have_without_waiting() throws Exception {
        server.put("/c.jsonld", DOC);
        LdContexts contexts = contexts().build();
        ContextRef ref = ContextRef.link(server.url("/c.jsonld"));
        assertTrue(contexts.needsDownload(ref));
        assertNull(contexts.cached(ref));
        assertEquals(0, server.hits("/c.jsonld"), "neither looks downloads");
        LdContext resolved = contexts.resolve(ref, 5_000);
        assertFalse(contexts.needsDownload(ref));
        assertSame(resolved, contexts.cached(ref), "the processed context is shared");
        // an inline context that names the same document needs no download either
        ContextRef inline = ContextRef.body(com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode()
                .add(server.url("/c.jsonld")).add(com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode()
                        .put("x", "https://example.org/x")));
        assertFalse(contexts.needsDownload(inline));
        assertEquals("https://example.org/x", contexts.cached(inline).expand("x"));
        assertEquals(1, server.hits("/c.jsonld"));
        // the core and an inline context without URLs never need one
        assertFalse(contexts.needsDownload(ContextRef.none()));
        assertFalse(contexts.needsDownload(ContextRef.link("https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context-v1.6.jsonld")));
    }

    @Test
    void the_negative_cache_expires_and_a_failure_is_never_kept_as_a_document() throws Exception {
        LdContexts contexts = contexts().limits(ContextLimits.builder().negativeTtlMs(10_000).build()).build();
        ContextRef ref = ContextRef.link(server.url("/later.jsonld"));
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, assertThrows(NgsiLdException.class, () -> contexts.resolve(ref, 5_000)).type());
        server.put("/later.jsonld", DOC); // the server is fixed
        clock.advance(9_999);
        assertFalse(contexts.needsDownload(ref), "still in the negative window");
        assertThrows(NgsiLdException.class, () -> contexts.resolve(ref, 5_000));
        assertEquals(1, server.hits("/later.jsonld"));
        clock.advance(1);
        assertTrue(contexts.needsDownload(ref), "the window has passed");
        assertEquals("https://example.org/Vehicle", contexts.resolve(ref, 5_000).expand("Vehicle"));
        assertEquals(2, server.hits("/later.jsonld"));
    }

    @Test
    void a_document_is_downloaded_again_after_its_ttl_or_its_max_age() throws Exception {
        server.put("/ttl.jsonld", DOC);
        server.put("/short.jsonld", new ContextServer.Reply(200, Map.of("Cache-Control", "public, max-age=60"),
                DOC.getBytes(StandardCharsets.UTF_8), 0, false));
        LdContexts contexts = contexts().limits(ContextLimits.builder().ttlMs(3_600_000).build()).build();
        ContextRef ttl = ContextRef.link(server.url("/ttl.jsonld"));
        ContextRef shortLived = ContextRef.link(server.url("/short.jsonld"));
        LdContext first = contexts.resolve(ttl, 5_000);
        contexts.resolve(shortLived, 5_000);
        clock.advance(59_999);
        assertFalse(contexts.needsDownload(shortLived));
        clock.advance(1);
        assertTrue(contexts.needsDownload(shortLived), "max-age=60 has passed");
        assertFalse(contexts.needsDownload(ttl));
        clock.advance(3_600_000 - 60_000);
        assertTrue(contexts.needsDownload(ttl), "the TTL has passed");
        LdContext again = contexts.resolve(ttl, 5_000);
        assertEquals(2, server.hits("/ttl.jsonld"));
        assertFalse(first == again, "a new document, a new processed context");
    }

    @Test
    void the_cache_is_bounded_in_entries_and_in_bytes_least_recently_used_out_first() throws Exception {
        for (String p : List.of("/1.jsonld", "/2.jsonld", "/3.jsonld")) {
            server.put(p, DOC);
        }
        LdContexts byEntries = contexts().limits(ContextLimits.builder().maxEntries(2).build()).build();
        byEntries.resolve(ContextRef.link(server.url("/1.jsonld")), 5_000);
        clock.advance(2_000);
        byEntries.resolve(ContextRef.link(server.url("/2.jsonld")), 5_000);
        clock.advance(2_000);
        byEntries.cached(ContextRef.link(server.url("/1.jsonld"))); // 1 is used again: 2 is now the least recently used
        clock.advance(2_000);
        byEntries.resolve(ContextRef.link(server.url("/3.jsonld")), 5_000);
        assertEquals(2, byEntries.stats().entries());
        assertFalse(byEntries.needsDownload(ContextRef.link(server.url("/1.jsonld"))));
        assertTrue(byEntries.needsDownload(ContextRef.link(server.url("/2.jsonld"))), "2 was evicted");
        assertFalse(byEntries.needsDownload(ContextRef.link(server.url("/3.jsonld"))));

        // the bound is in the heap bytes a document keeps (RetainedSizeTest measures them): one document's, probed
        LdContexts probe = contexts().build();
        probe.resolve(ContextRef.link(server.url("/1.jsonld")), 5_000);
        long size = probe.documentBytes();
        LdContexts byBytes = contexts().limits(ContextLimits.builder().maxBytes(2L * size + size / 2)
                .maxDocumentBytes((int) size).build()).build();
        for (String p : List.of("/1.jsonld", "/2.jsonld", "/3.jsonld")) {
            byBytes.resolve(ContextRef.link(server.url(p)), 5_000);
            clock.advance(2_000);
        }
        assertEquals(2, byBytes.stats().entries());
        assertTrue(byBytes.stats().bytes() <= 2L * size + size / 2, "bytes " + byBytes.stats().bytes());
        assertTrue(byBytes.needsDownload(ContextRef.link(server.url("/1.jsonld"))), "1 was evicted");
    }

    @Test
    void a_loop_thread_outside_a_coroutine_never_downloads() throws Exception {
        server.put("/l.jsonld", DOC);
        LdContexts contexts = contexts().build();
        ContextRef ref = ContextRef.link(server.url("/l.jsonld"));
        NgsiLdException e = onLoop(loop(), () -> {
            assertTrue(contexts.needsDownload(ref));
            assertNull(contexts.cached(ref));
            try {
                contexts.resolve(ref, 5_000);
                return null;
            } catch (NgsiLdException x) {
                return x;
            }
        });
        assertEquals(ErrorType.LD_CONTEXT_NOT_AVAILABLE, e.type());
        assertEquals(0, server.hits("/l.jsonld"));
    }

    @Test
    void the_counters_are_meters_prometheus_names_as_before() throws Exception {
        server.put("/m.jsonld", DOC);
        LdContexts contexts = contexts().build();
        ContextRef ref = ContextRef.link(server.url("/m.jsonld"));
        contexts.resolve(ref, 5_000);
        contexts.cached(ref);
        assertThrows(NgsiLdException.class, () -> contexts.resolve(ContextRef.link(server.url("/none.jsonld")), 5_000));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        contexts.bindTo(registry);
        String text = registry.scrape();
        assertTrue(text.contains("\ncor_ngsild_context_cache_hits_total 1.0\n"), text);
        assertTrue(text.contains("\ncor_ngsild_context_cache_misses_total 2.0\n"), text);
        assertTrue(text.contains("\ncor_ngsild_context_downloads_total 2.0\n"), text);
        assertTrue(text.contains("\ncor_ngsild_context_download_failures_total 1.0\n"), text);
        assertTrue(text.contains("\ncor_ngsild_context_cache_entries 1.0\n"), text);
        assertTrue(contexts.documentBytes() > DOC.getBytes(StandardCharsets.UTF_8).length, "a parsed document keeps more than its text");
        assertTrue(text.contains("\ncor_ngsild_context_cache_bytes " + (double) contexts.documentBytes() + "\n"), text);
        assertTrue(text.contains("\ncor_ngsild_context_processed_bytes " + (double) contexts.processedBytes() + "\n"), text);
        assertTrue(text.contains("\ncor_ngsild_context_implicit_bytes 0.0\n"), text);
        assertTrue(text.contains("# TYPE cor_ngsild_context_cache_hits_total counter"), text);
    }
}
