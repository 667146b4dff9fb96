package dev.cor.ngsild.ld;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.policy.ContextLimits;
import dev.cor.rest.client.CorRestClient;
import org.junit.jupiter.api.Test;

/**
 * The estimate the {@code @context} caches are bounded by ({@link RetainedSize}) against the heap:
 * what the processed contexts, the downloaded documents and the ImplicitlyCreated contexts keep,
 * measured as the heap after a full GC before and after making many of them, is within 15 %
 * of what the caches count. Contexts of several shapes: plain terms, expanded definitions,
 * CURIEs through a prefix, non-Latin-1 names.
 */
class RetainedSizeTest {
    /** Enough that the JVM's own noise (a few MiB) is small beside it. */
    private static final int CONTEXTS = 40;
    private static final int TERMS = 2_000;

    /** A context of its own for {@code n}: {@code TERMS} terms of mixed shapes. */
    static ObjectNode context(int n) {
        ObjectNode c = JsonNodeFactory.instance.objectNode();
        c.put("ex" + n, "https://example.org/" + n + "/");
        for (int i = 0; i < TERMS; i++) {
            String term = "term" + n + "_" + i;
            switch (i % 4) {
                case 0 -> c.put(term, "https://example.org/vocab/" + n + "/" + term);
                case 1 -> c.put(term, "ex" + n + ":" + term); // a CURIE: its IRI a string of its own
                case 2 -> c.putObject(term).put("@id", "https://example.org/rel/" + n + "/" + i).put("@type", "@id");
                default -> c.put("名前" + n + "_" + i, "https://example.org/名前/" + n + "/" + i);
            }
        }
        return c;
    }

    /** The heap in use after a full GC: the least of three, so that a GC that left garbage does not count. */
    static long heapAfterGc() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            least = Math.min(least, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return least;
    }

    private static void assertClose(String what, long measured, long estimated) {
        double ratio = (double) measured / estimated;
        assertTrue(ratio > 0.85 && ratio < 1.15, what + ": the heap grew by " + measured + " bytes, the estimate says "
                + estimated + " (ratio " + ratio + ")");
    }

    @Test
    void the_processed_contexts_keep_what_their_estimate_says() {
        LdContexts contexts = LdContexts.builder().limits(ContextLimits.builder().maxProcessedBytes(Long.MAX_VALUE / 2)
                .maxProcessed(1 << 20).maxInlineTerms(1 << 20).maxInlineBytes(1 << 30).build()).build();
        contexts.resolve(ContextRef.body(context(-1)), 1_000); // the classes loaded, the maps grown once
        long before = heapAfterGc();
        long counted = contexts.processedBytes();
        for (int n = 0; n < CONTEXTS; n++) {
            contexts.resolve(ContextRef.body(context(n)), 1_000); // its tree dropped: what is left is the cache's
        }
        long measured = heapAfterGc() - before;
        assertClose("processed contexts", measured, contexts.processedBytes() - counted);
        assertTrue(contexts.core() != null); // the service itself is live until here
    }

    /**
     * A processed context shares the core context's terms and their compactions rather than
     * copying them: one of three terms keeps a few kB beside the core's, not the core again
     * (~50 kB when each copied the core's terms and compactions).
     */
    @Test
    void a_small_processed_context_keeps_no_copy_of_the_core() {
        LdContexts contexts = LdContexts.builder().limits(ContextLimits.builder().maxProcessedBytes(Long.MAX_VALUE / 2)
                .maxProcessed(1 << 20).build()).build();
        contexts.resolve(ContextRef.body(small(-1)), 1_000);
        int many = 2_000;
        long before = heapAfterGc();
        long counted = contexts.processedBytes();
        for (int n = 0; n < many; n++) {
            contexts.resolve(ContextRef.body(small(n)), 1_000);
        }
        long perContext = (heapAfterGc() - before) / many;
        long countedPerContext = (contexts.processedBytes() - counted) / many;
        assertTrue(perContext < 8 << 10, "each small processed context keeps " + perContext + " bytes");
        // what it counts: its memos at their bound (they fill as it is used), and what it keeps
        assertTrue(countedPerContext - LdContext.MEMO_BYTES < 8 << 10, "each small processed context counts "
                + countedPerContext + " bytes");
    }

    private static ObjectNode small(int n) {
        ObjectNode c = JsonNodeFactory.instance.objectNode();
        for (int i = 0; i < 3; i++) {
            c.put("small" + n + "_" + i, "https://example.org/small/" + n + "/" + i);
        }
        return c;
    }

    @Test
    void the_implicitly_created_contexts_keep_what_their_estimate_says() {
        LdContexts contexts = LdContexts.builder().limits(ContextLimits.builder().maxImplicitBytes(Long.MAX_VALUE / 2).build()).build();
        LdContext core = contexts.core();
        contexts.linkUrlFor(core.withOrigin(context(-1), null, new LdContext.Source[0], 0), "http://h", null);
        long before = heapAfterGc();
        long counted = contexts.implicitBytes();
        for (int n = 0; n < CONTEXTS; n++) {
            contexts.linkUrlFor(core.withOrigin(context(n), null, new LdContext.Source[0], 0), "http://h", "tenant");
        }
        long measured = heapAfterGc() - before;
        assertClose("ImplicitlyCreated contexts", measured, contexts.implicitBytes() - counted);
    }

    @Test
    void the_downloaded_documents_keep_what_their_estimate_says() throws Exception {
        try (ContextServer server = new ContextServer(); CorRestClient client = CorRestClient.builder().build()) {
            List<String> urls = new ArrayList<>();
            for (int n = -1; n < CONTEXTS; n++) {
                JsonNode doc = JsonNodeFactory.instance.objectNode().set("@context", context(n));
                server.put("/" + n + ".jsonld", doc.toString());
                urls.add(server.url("/" + n + ".jsonld"));
            }
            LdContexts contexts = LdContexts.builder().client(client).limits(ContextLimits.builder()
                    .maxBytes(Long.MAX_VALUE / 2).maxEntries(1 << 20).maxProcessed(1).build()).build();
            contexts.documents().get(urls.get(0), System.nanoTime() + 5_000_000_000L, new boolean[1]);
            long before = heapAfterGc();
            long counted = contexts.documentBytes();
            for (String url : urls.subList(1, urls.size())) {
                contexts.documents().get(url, System.nanoTime() + 5_000_000_000L, new boolean[1]);
            }
            long measured = heapAfterGc() - before;
            assertClose("downloaded documents", measured, contexts.documentBytes() - counted);
        }
    }
}
