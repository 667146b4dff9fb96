package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.cor.ngsild.conformance.ContextServer;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every family {@code /metrics} exports is expected here, and each moves with what it counts:
 * a new family fails {@link #everyExportedFamilyIsExpectedByThisTest} until a test drives it.
 * The families {@link CorServerProcessTest} and {@link OperatorFlagsProcessTest} drive are named
 * with the test that does.
 */
@Tag("process")
class MetricsProcessTest {
    private static final String LINK = ">; rel=\"http://www.w3.org/ns/json-ld#context\"; type=\"application/ld+json\"";

    /** Every family the launcher exports (with --corPort and the durable store). */
    private static final Set<String> EXPECTED = Set.of(
            // CorServerProcessTest.theJarServesTheBrokerWithVersionHealthAndMetricsAndExitsZeroOnSigterm
            "cor_server_info", "cor_ngsild_requests_total", "cor_ngsild_entities", "cor_http_requests_total",
            "cor_http_answers_written_total", "cor_http_connections_open", "cor_dispatch_total",
            "cor_loop_coroutines_live", "cor_store_writable",
            // OperatorFlagsProcessTest (sent, failed, overflowed)
            "cor_ngsild_notifications_total",
            // ValueIndexProcessTest: the value indexes and the queries that scanned
            "cor_store_value_index_bytes", "cor_store_value_index_built_total", "cor_store_value_index_dropped_total",
            "cor_ngsild_query_scans_total", "cor_ngsild_query_value_index_total",
            // DurableProcessTest: snapshots, failures of the disk
            "cor_store_snapshots_total", "cor_store_snapshot_seq", "cor_store_journal_failures_total",
            // here
            "cor_store_journal_records_total", "cor_store_journal_bytes_total", "cor_store_journal_forces_total",
            "cor_store_journal_forced_records_total", "cor_store_journal_durable_seq",
            "cor_store_snapshot_failures_total", "cor_store_recovery_seconds",
            "cor_http_requests_rejected_total", "cor_http_connections_accepted_total", "cor_loop_connections",
            "cor_proto_requests_total", "cor_proto_responses_total", "cor_proto_connections_accepted_total",
            "cor_proto_connections_open",
            "cor_ngsild_context_cache_hits_total", "cor_ngsild_context_cache_misses_total",
            "cor_ngsild_context_downloads_total", "cor_ngsild_context_download_failures_total",
            "cor_ngsild_context_negative_hits_total", "cor_ngsild_context_evictions_total",
            "cor_ngsild_context_cache_entries", "cor_ngsild_context_cache_bytes", "cor_ngsild_context_negative_entries",
            "cor_ngsild_context_processed", "cor_ngsild_context_processed_bytes", "cor_ngsild_context_implicit",
            "cor_ngsild_context_implicit_bytes",
            // scrapePassesPromtoolWithTheLatencyHistogramAndTheProcessAndJvmFamilies
            "cor_ngsild_request_duration_seconds", "cor_ngsild_request_duration_seconds_max");

    /** The process and JVM families an operator's dashboards read (the Prometheus client's names); others may come with them. */
    private static final Set<String> PROCESS_AND_JVM = Set.of("process_open_fds", "process_max_fds",
            "process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds",
            "jvm_memory_used_bytes", "jvm_memory_committed_bytes", "jvm_memory_max_bytes", "jvm_memory_pool_used_bytes",
            "jvm_gc_collection_seconds", "jvm_threads_current", "jvm_threads_daemon", "jvm_threads_state");

    private static double delta(PromText before, PromText after, String series) {
        return after.valueOrZero(series) - before.valueOrZero(series);
    }

    @Test
    void everyExportedFamilyIsExpectedByThisTest() throws Exception {
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--corPort", "0")) {
            // the histogram's families appear with the first request the broker answers
            assertEquals(200, s.send("GET", "/ngsi-ld/v1/entities?type=T", null).statusCode());
            Set<String> exported = s.metrics().families();
            Set<String> cor = new TreeSet<>();
            Set<String> other = new TreeSet<>();
            for (String f : exported) {
                (f.startsWith("cor_") ? cor : other).add(f);
            }
            Set<String> unexpected = new TreeSet<>(cor);
            unexpected.removeAll(EXPECTED);
            Set<String> missing = new TreeSet<>(EXPECTED);
            missing.removeAll(cor);
            assertEquals(Set.of(), unexpected, "families no test drives");
            assertEquals(Set.of(), missing, "families expected and no longer exported");
            other.removeIf(f -> f.startsWith("jvm_") || f.startsWith("process_"));
            assertEquals(Set.of(), other, "families that are neither cor's nor the process's or the JVM's");
        }
    }

    @Test
    void oneEntityWriteIsOneJournalRecordMadeDurableByItsOwnFsync() throws Exception {
        // without the history, whose instances are a second record of each write under the same
        // fsync (GroupCommitTest counts both)
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--temporal", "off")) {
            String id = "urn:ngsi-ld:T:journal";
            assertEquals(201, s.send("POST", "/ngsi-ld/v1/entities", "{\"id\":\"" + id
                    + "\",\"type\":\"T\",\"p\":{\"type\":\"Property\",\"value\":0}}").statusCode());
            PromText m1 = s.metrics();
            String[] writes = {"PATCH /attrs", "POST /attrs", "PUT", "PATCH"};
            String[] bodies = {"{\"p\":{\"type\":\"Property\",\"value\":1}}", "{\"q\":{\"type\":\"Property\",\"value\":2}}",
                    "{\"type\":\"T\",\"p\":{\"type\":\"Property\",\"value\":3}}", "{\"p\":{\"type\":\"Property\",\"value\":4}}"};
            PromText before = m1;
            for (int i = 0; i < writes.length; i++) {
                String[] w = writes[i].split(" ");
                HttpResponse<String> r = s.send(w[0], "/ngsi-ld/v1/entities/" + id + (w.length > 1 ? w[1] : ""), bodies[i]);
                assertEquals(204, r.statusCode(), writes[i] + ": " + r.body());
                PromText after = s.metrics();
                assertEquals(1, delta(before, after, "cor_store_journal_records_total"), writes[i] + " is one record");
                assertEquals(1, delta(before, after, "cor_store_journal_forces_total"), writes[i] + " waits for one fsync");
                assertEquals(1, delta(before, after, "cor_store_journal_forced_records_total"), writes[i]);
                assertTrue(delta(before, after, "cor_store_journal_bytes_total") > 0, writes[i]);
                assertEquals(1, delta(before, after, "cor_store_journal_durable_seq"),
                        writes[i] + " is durable once answered");
                before = after;
            }
            // a batch of three entities: three records, however many fsyncs they share
            PromText b0 = s.metrics();
            HttpResponse<String> batch = s.send("POST", "/ngsi-ld/v1/entityOperations/upsert",
                    "[{\"id\":\"urn:ngsi-ld:T:b1\",\"type\":\"T\"},{\"id\":\"urn:ngsi-ld:T:b2\",\"type\":\"T\"},"
                            + "{\"id\":\"" + id + "\",\"type\":\"T\"}]");
            assertTrue(batch.statusCode() / 100 == 2, batch.body());
            PromText b1 = s.metrics();
            assertEquals(3, delta(b0, b1, "cor_store_journal_records_total"), "one record per entity");
            assertTrue(delta(b0, b1, "cor_store_journal_forces_total") <= 3);
            assertEquals(0, b1.value("cor_store_snapshot_failures_total"));
            // the recovery's time in seconds, the base unit: the milliseconds the start printed, / 1000
            Matcher recovered = Pattern.compile(" in (\\d+) ms \\(").matcher(s.stdout());
            assertTrue(recovered.find(), s.stdout());
            assertEquals(Long.parseLong(recovered.group(1)) / 1000.0, b1.value("cor_store_recovery_seconds"), 0.0005,
                    s.stdout());
        }
    }

    @Test
    void requestsRefusedBeforeDispatchAndConnectionsAreCounted() throws Exception {
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--corPort", "0")) {
            PromText before = s.metrics();
            try (Socket raw = new Socket()) {
                raw.connect(new InetSocketAddress("127.0.0.1", s.port), 10_000);
                raw.setSoTimeout(30_000);
                OutputStream o = raw.getOutputStream();
                o.write("NOT HTTP AT ALL\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                o.flush();
                InputStream in = raw.getInputStream();
                String head = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
                assertEquals("HTTP/1.1 400", head);
            }
            PromText after = s.metrics();
            assertEquals(1, delta(before, after, "cor_http_requests_rejected_total"), "the malformed request");
            assertTrue(delta(before, after, "cor_http_connections_accepted_total") >= 1, "the raw connection");
            assertEquals(after.value("cor_http_connections_open"), after.value("cor_loop_connections{loop=\"0\"}"),
                    "one loop holds every open connection");
            assertTrue(after.value("cor_loop_connections{loop=\"0\"}") >= 1, "this scrape's own");

            s.awaitStdout("cor://", Duration.ofSeconds(30));
            Matcher m = Pattern.compile("cor://127\\.0\\.0\\.1:(\\d+)").matcher(s.stdout());
            assertTrue(m.find(), s.stdout());
            assertEquals(0, after.value("cor_proto_requests_total"));
            assertEquals(0, after.value("cor_proto_connections_accepted_total"));
            try (CorRestClient cor = CorRestClient.builder().build()) {
                CorRestClientResponse r = cor.send(CorRestClientRequest.get("cor://127.0.0.1:" + m.group(1)
                        + "/ngsi-ld/v1/entities?type=T"));
                assertEquals(200, r.status(), r.bodyText());
                PromText during = s.metrics();
                assertEquals(1, during.value("cor_proto_requests_total"));
                assertEquals(1, during.value("cor_proto_responses_total"));
                assertEquals(1, during.value("cor_proto_connections_accepted_total"));
                assertEquals(1, during.value("cor_proto_connections_open"), "the client keeps its connection");
            }
        }
    }

    @Test
    void contextCacheCountersMoveWithDownloadsHitsAndFailures() throws Exception {
        try (ContextServer contexts = ContextServer.start();
                ServerProcess s = ServerProcess.start("--httpLoops", "1", "--store", "memory")) {
            contexts.serve("/metrics-test.jsonld", "{\"@context\":{\"speed\":\"https://cor.test/metrics#speed\"}}");
            String good = "<" + contexts.url("/metrics-test.jsonld") + LINK;
            int closed = ServerProcess.freePort(); // nothing listens there
            String bad = "<http://127.0.0.1:" + closed + "/gone.jsonld" + LINK;

            PromText m0 = s.metrics();
            assertEquals(200, s.send("GET", "/ngsi-ld/v1/entities?type=T", null, "Link", good).statusCode());
            PromText m1 = s.metrics();
            assertEquals(1, delta(m0, m1, "cor_ngsild_context_downloads_total"));
            assertEquals(1, delta(m0, m1, "cor_ngsild_context_cache_misses_total"));
            assertEquals(1, delta(m0, m1, "cor_ngsild_context_cache_entries"));
            assertTrue(delta(m0, m1, "cor_ngsild_context_cache_bytes") > 0);
            assertTrue(delta(m0, m1, "cor_ngsild_context_processed") >= 1);

            assertEquals(200, s.send("GET", "/ngsi-ld/v1/entities?type=T", null, "Link", good).statusCode());
            PromText m2 = s.metrics();
            assertEquals(1, delta(m1, m2, "cor_ngsild_context_cache_hits_total"));
            assertEquals(0, delta(m1, m2, "cor_ngsild_context_downloads_total"));

            assertEquals(504, s.send("GET", "/ngsi-ld/v1/entities?type=T", null, "Link", bad).statusCode());
            PromText m3 = s.metrics();
            assertEquals(1, delta(m2, m3, "cor_ngsild_context_download_failures_total"));
            assertEquals(1, delta(m2, m3, "cor_ngsild_context_negative_entries"));
            assertEquals(504, s.send("GET", "/ngsi-ld/v1/entities?type=T", null, "Link", bad).statusCode());
            PromText m4 = s.metrics();
            assertEquals(1, delta(m3, m4, "cor_ngsild_context_negative_hits_total"), "answered from the negative cache");
            assertEquals(0, delta(m3, m4, "cor_ngsild_context_downloads_total"));
            // the launcher sets no bound small enough to evict: what it counts is covered by LdContexts' own tests
            assertEquals(0, m4.value("cor_ngsild_context_evictions_total"));

            // an inline context answered in application/json: processed, and hosted as ImplicitlyCreated for its Link
            HttpResponse<String> q = s.send("POST", "/ngsi-ld/v1/entityOperations/query", "{\"type\": \"Query\", \"entities\":"
                    + " [{\"type\": \"T\"}], \"@context\": {\"metricsTerm\": \"https://cor.test/metrics#term\"}}",
                    "Content-Type", "application/ld+json", "Accept", "application/json");
            assertEquals(200, q.statusCode(), q.body());
            PromText m5 = s.metrics();
            assertEquals(1, delta(m4, m5, "cor_ngsild_context_implicit"));
            assertTrue(delta(m4, m5, "cor_ngsild_context_implicit_bytes") > 0);
            assertTrue(delta(m4, m5, "cor_ngsild_context_processed_bytes") > 0);
        }
    }

    /**
     * The scrape after a few requests, as Prometheus' own checker reads it: {@code promtool check
     * metrics} exits 0 and has nothing to say (no lint: base units, {@code _total} on counters,
     * help on every family). It holds the latency histogram of the operations asked, in seconds
     * from 50 us to 10 s, and the process and JVM families.
     */
    @Test
    void scrapePassesPromtoolWithTheLatencyHistogramAndTheProcessAndJvmFamilies() throws Exception {
        Path promtool = Promtool.find();
        try (ServerProcess s = ServerProcess.start("--httpLoops", "1", "--corPort", "0")) {
            String id = "urn:ngsi-ld:T:promtool";
            assertEquals(201, s.send("POST", "/ngsi-ld/v1/entities", "{\"id\":\"" + id + "\",\"type\":\"T\"}").statusCode());
            for (int i = 0; i < 3; i++) {
                assertEquals(200, s.send("GET", "/ngsi-ld/v1/entities/" + id, null).statusCode());
            }
            assertEquals(404, s.send("GET", "/ngsi-ld/v1/entities/" + id + "-none", null).statusCode());
            HttpResponse<String> scrape = s.send("GET", "/metrics", null);
            assertEquals(200, scrape.statusCode());
            assertEquals("text/plain; version=0.0.4; charset=utf-8", scrape.headers().firstValue("Content-Type").orElse(null));

            Promtool.Result check = Promtool.checkMetrics(promtool, scrape.body());
            assertEquals("", check.output(), "promtool check metrics has nothing to say");
            assertEquals(0, check.exit(), check.output());

            PromText m = PromText.parse(scrape.body());
            String ok = "{operation=\"retrieveEntity\",status_class=\"2xx\"";
            assertEquals(3, m.value("cor_ngsild_request_duration_seconds_count" + ok + "}"));
            assertEquals(3, m.value("cor_ngsild_request_duration_seconds_bucket" + ok + ",le=\"+Inf\"}"));
            assertEquals(3, m.value("cor_ngsild_request_duration_seconds_bucket" + ok + ",le=\"10.0\"}"), "the last bound: 10 s");
            assertTrue(m.has("cor_ngsild_request_duration_seconds_bucket" + ok + ",le=\"5.0E-5\"}"), "the first bound: 50 us");
            double sum = m.value("cor_ngsild_request_duration_seconds_sum" + ok + "}");
            assertTrue(sum > 0 && sum < 30, "three answers' time in seconds: " + sum);
            assertEquals(1, m.value("cor_ngsild_request_duration_seconds_count{operation=\"retrieveEntity\",status_class=\"4xx\"}"));
            assertEquals(1, m.value("cor_ngsild_request_duration_seconds_count{operation=\"createEntity\",status_class=\"2xx\"}"));
            Set<String> missing = new TreeSet<>(PROCESS_AND_JVM);
            missing.removeAll(m.families());
            assertEquals(Set.of(), missing, "process and JVM families");
            assertTrue(m.value("process_open_fds") > 0, "the jar, the sockets, the journal");
            assertTrue(m.value("jvm_memory_used_bytes{area=\"heap\"}") > 0);
            assertTrue(m.value("jvm_threads_current") > 0);
        }
    }
}
