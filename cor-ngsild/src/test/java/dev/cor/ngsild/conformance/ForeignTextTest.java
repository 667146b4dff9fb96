package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Nothing another server sent - a byte of a document, a status line, a reason phrase, an error
 * text - reaches a client's answer or a subscription's {@code lastFailureReason}, and a client
 * cannot tell apart the ways a URL it gave fails. A context named by URL that cannot be had or
 * used is one answer - 504 LdContextNotAvailable with the same detail, naming only that URL -
 * whether it was refused, timed out, answered an error, was too large, not JSON, no context, an
 * invalid one, redirected somewhere private or named another that fails; the precise reason is in
 * the broker's log. Forwards to context sources (the NGSILD-Warning header, the 207s) and
 * notifications keep a source's or receiver's text out too.
 */
class ForeignTextTest extends ConformanceTest {
    /** What every foreign server here puts in what it sends; no answer may carry it. */
    private static final String SECRET = "SECRET";

    private final List<String> log = new CopyOnWriteArrayList<>();
    private final Logger ld = Logger.getLogger("dev.cor.ngsild.ld");
    private final Handler capture = new Handler() {
        private final SimpleFormatter format = new SimpleFormatter();

        @Override
        public void publish(LogRecord r) {
            log.add(format.formatMessage(r));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private final List<AutoCloseable> open = new ArrayList<>();

    @BeforeEach
    void captureTheLog() {
        ld.addHandler(capture);
    }

    @AfterEach
    void stop() throws Exception {
        ld.removeHandler(capture);
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    private static int closedPort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private SourceStub stub(java.util.function.Function<SourceStub.Seen, SourceStub.Behaviour> b) {
        SourceStub s = SourceStub.start(b);
        open.add(s);
        return s;
    }

    private static String path(String what) {
        return "/" + Entities.uniqueName(what) + ".jsonld";
    }

    private static void assertNoSecret(Answer a) {
        assertFalse(a.toString().contains(SECRET), () -> "a foreign server's text in the answer: " + a);
    }

    /**
     * Whether the log has, or gets within 10 s, a line naming {@code url} that says {@code why} (a
     * download that outlives the request's deadline is logged when it ends).
     */
    private boolean logged(String url, String why) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        do {
            for (String line : log) {
                if (line.contains(url) && line.contains(why)) {
                    return true;
                }
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // a poll, not a busy core
        } while (System.nanoTime() < deadline);
        return false;
    }

    @Test
    @DisplayName("6.3.2, 5.5.6: every context URL that cannot be had or used is one answer naming only that URL; the reason is logged")
    void everyUnusableContextIsOneAnswer() {
        int closed = closedPort();
        SourceStub raw = stub(seen -> {
            String target = seen.target();
            if (target.contains("reason")) {
                return new SourceStub.Raw("HTTP/1.1 403 SECRET-REASON\r\nContent-Length: 0\r\n\r\n");
            }
            if (target.contains("redirect")) {
                return new SourceStub.Raw("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:" + closed
                        + "/SECRET-PATH\r\nContent-Length: 0\r\n\r\n");
            }
            return new SourceStub.Raw("SECRET-BANNER 220 ready\r\n\r\n");
        });
        String notJson = path("token");
        contexts.reply(notJson, 200, "application/ld+json", "eyJhbGciOiJIUzI1NiJ9.SECRET-TOKEN");
        String noContext = path("nocontext");
        contexts.serve(noContext, "{\"secret\": \"SECRET-VALUE\"}");
        String invalid = path("invalid");
        contexts.serve(invalid, "{\"@context\": {\"SECRET-TERM\": {\"@id\": 5}}}");
        String large = path("large");
        contexts.serve(large, "{\"@context\": {\"a\": \"urn:" + SECRET + "x".repeat(5 << 20) + "\"}}");
        String nested = path("nested");
        String inner = contexts.url("/SECRET-INNER-" + Entities.uniqueName("c") + ".jsonld");
        contexts.serve(nested, "{\"@context\": [\"" + inner + "\"]}");
        String cycleA = path("cycle-a");
        String cycleB = "/SECRET-B-" + Entities.uniqueName("c") + ".jsonld";
        contexts.serve(cycleA, "{\"@context\": [\"" + contexts.url(cycleB) + "\"]}");
        contexts.serve(cycleB, "{\"@context\": [\"" + contexts.url(cycleA) + "\", {\"x\": \"urn:SECRET\"}]}");

        // each URL a client names, and what the operator's log says of it
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("http://127.0.0.1:" + closed + "/ctx.jsonld", "refused");
        cases.put(contexts.url(ContextServer.HANG), "in time");
        cases.put(raw.endpoint() + "/reason.jsonld", "403");
        cases.put(raw.endpoint() + "/redirect.jsonld", "refused");
        cases.put(raw.endpoint() + "/banner.jsonld", "SECRET-BANNER");
        cases.put(contexts.url(notJson), "not JSON");
        cases.put(contexts.url(noContext), "no top-level @context");
        cases.put(contexts.url(invalid), "invalid IRI mapping");
        cases.put(contexts.url(large), "limit");
        cases.put(contexts.url(nested), "404");
        cases.put(contexts.url(cycleA), "cyclic");

        String type = Entities.uniqueName("Thing");
        String detail = null;
        for (Map.Entry<String, String> c : cases.entrySet()) {
            String url = c.getKey();
            Answer a = api.get("/entities").query("type", type).link(url).send();
            Checks.problem(a, RemoteContextTest.LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
            assertNoSecret(a);
            String mine = a.json().path("detail").asText().replace(url, "<URL>");
            assertTrue(mine.contains("<URL>"), a::toString);
            if (detail == null) {
                detail = mine;
            }
            assertEquals(detail, mine, () -> "one detail for every unusable context: " + a);
            assertTrue(logged(url, c.getValue()), () -> "the log says why " + url + " failed (" + c.getValue() + "): " + log);
        }
        // the same for a write naming it in its body
        String id = Entities.id(type);
        Answer write = api.post("/entities").ldJson(Entities.withContext(Entities.minimal(id, type), contexts.url(notJson))).send();
        Checks.problem(write, RemoteContextTest.LD_CONTEXT_NOT_AVAILABLE, "LdContextNotAvailable");
        assertEquals(detail, write.json().path("detail").asText().replace(contexts.url(notJson), "<URL>"));
    }

    @Test
    @DisplayName("6.3.17: a source that answers garbage is a 111 warning that quotes none of it")
    void aSourcesGarbageIsNotQuoted() {
        String type = Entities.uniqueName("Thing");
        SourceStub source = stub(seen -> new SourceStub.Raw("HTTP/1.1 SECRET-STATUS\r\n\r\n"));
        register(type, source.endpoint(), "[\"retrieveOps\"]");
        Answer a = api.get("/entities").query("type", type).send();
        Checks.status(a, 200);
        assertNotNull(a.header("NGSILD-Warning"), a::toString);
        assertNoSecret(a);
    }

    @Test
    @DisplayName("6.3.17: a source's entity that is none is a 111 warning that quotes none of it")
    void aSourcesBadEntityIsNotQuoted() {
        String type = Entities.uniqueName("Thing");
        String id = Entities.id(type);
        SourceStub source = stub(seen -> new SourceStub.Answer(200,
                "{\"id\": \"" + id + "\", \"type\": \"" + type + "\", \"speed\": {\"type\": \"SECRET-KIND\", \"value\": 1}}", 0));
        register(type, source.endpoint(), "[\"retrieveOps\"]");
        Answer a = api.get(Ngsi.entity(id)).send();
        assertNotNull(a.header("NGSILD-Warning"), a::toString);
        assertNoSecret(a);
    }

    @Test
    @DisplayName("5.2.18, 5.2.19: a source's 207 of a write is named in ours by its registration, never by its reasons or names")
    void aSourcesUpdateResultIsNotQuoted() {
        String type = Entities.uniqueName("Thing");
        String id = Entities.id(type);
        Checks.created(api.post("/entities").query("local", "true").json(Entities.minimal(id, type)).send(), id);
        SourceStub source = stub(seen -> new SourceStub.Answer(207, "{\"updated\": [], \"notUpdated\": [{\"attributeName\":"
                + " \"speed\", \"reason\": \"SECRET-REASON\"}, {\"attributeName\": \"SECRET-NAME\", \"reason\": \"x\"}]}", 0));
        register(type, source.endpoint(), "[\"redirectionOps\"]");
        Answer a = api.post(Ngsi.entity(id) + "/attrs").json(Json.obj("{\"speed\": {\"type\": \"Property\", \"value\": 2}}")).send();
        Checks.status(a, 207);
        assertEquals("speed", a.json().path("notUpdated").path(0).path("attributeName").asText(), a::toString);
        assertNoSecret(a);
    }

    @Test
    @DisplayName("5.2.17: a source's errors in a batch are named in ours by their type, never by their text")
    void aSourcesBatchErrorsAreNotQuoted() {
        String type = Entities.uniqueName("Thing");
        String id = Entities.id(type);
        SourceStub source = stub(seen -> new SourceStub.Answer(207, "{\"success\": [], \"errors\": [{\"entityId\": \"" + id
                + "\", \"error\": {\"type\": \"https://uri.etsi.org/ngsi-ld/errors/BadRequestData\", \"title\": \"SECRET-TITLE\","
                + " \"status\": 400, \"detail\": \"SECRET-DETAIL\"}}]}", 0));
        register(type, source.endpoint(), "[\"createBatch\"]");
        Answer a = api.post("/entityOperations/create").json(Json.array(Entities.minimal(id, type))).send();
        Checks.status(a, 207);
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/BadRequestData", a.json().path("errors").path(0).path("error")
                .path("type").asText(), a::toString);
        assertNoSecret(a);
    }

    @Test
    @DisplayName("5.8: a receiver's garbage is not in the subscription's lastFailureReason")
    void aReceiversGarbageIsNotKept() {
        String type = Entities.uniqueName("Thing");
        SourceStub receiver = stub(seen -> new SourceStub.Raw("HTTP/1.1 SECRET-STATUS\r\n\r\n"));
        String sub = Entities.uniqueName("urn:ngsi-ld:Subscription:");
        Checks.status(api.post("/subscriptions").json(Json.obj("{\"id\": \"%s\", \"type\": \"Subscription\", \"entities\":"
                + " [{\"type\": \"%s\"}], \"notification\": {\"endpoint\": {\"uri\": \"%s/notify\"}}}", sub, type,
                receiver.endpoint())).send(), 201);
        String id = Entities.id(type);
        Checks.created(api.post("/entities").json(Entities.minimal(id, type)).send(), id);
        long deadline = System.nanoTime() + 20_000_000_000L;
        JsonNode s;
        do {
            assertTrue(System.nanoTime() < deadline, "the notification failed within 20 s");
            Thread.onSpinWait();
            s = Checks.okJson(api.get("/subscriptions/" + sub).send());
        } while (s.path("notification").path("timesFailed").asInt() < 1);
        String reason = broker.subscriptions().get("", sub).lastFailureReason();
        assertNotNull(reason);
        assertFalse(reason.contains(SECRET), reason);
    }

    /** An inclusive registration of {@code type} at {@code endpoint} for {@code operations}. */
    private static void register(String type, String endpoint, String operations) {
        Checks.status(api.post("/csourceRegistrations").json(Json.obj("{\"type\": \"ContextSourceRegistration\", \"information\":"
                + " [{\"entities\": [{\"type\": \"%s\"}]}], \"endpoint\": \"%s\", \"operations\": %s}", type, endpoint, operations))
                .send(), 201);
    }
}
