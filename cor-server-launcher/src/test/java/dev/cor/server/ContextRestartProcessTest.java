package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.KeepAliveHttp;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The launcher stopped with SIGTERM or killed with {@code kill -9} keeps the subscriptions and
 * registrations made with a context it serves: a {@code Link} to an ImplicitlyCreated context it
 * listed, and to a Hosted one deleted (204) after they were made. After the restart each is
 * retrieved as before and nothing is logged as "cannot be restored".
 */
@Tag("process")
class ContextRestartProcessTest {
    private static final String LINK = "; rel=\"http://www.w3.org/ns/json-ld#context\"";
    private final KeepAliveHttp http = new KeepAliveHttp();

    private HttpResponse<String> send(ServerProcess s, String method, String path, String contentType, String body,
            String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(s.uri("/ngsi-ld/v1" + path)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return http.sendString(b.build());
    }

    /** A retrieved subscription or registration without what counts this process's notifications and forwards. */
    private static String definition(String body) throws Exception {
        ObjectNode n = (ObjectNode) new ObjectMapper().readTree(body);
        for (ObjectNode counted : n.get("notification") instanceof ObjectNode notification ? List.of(n, notification) : List.of(n)) {
            for (String counter : List.of("timesSent", "timesFailed", "lastNotification", "lastSuccess", "lastFailure", "status")) {
                counted.remove(counter);
            }
        }
        // a subscription's jsonldContext naming an ImplicitlyCreated context of the broker is the URL its
        // notifications link now: such contexts are not kept, after a restart it is another with the same
        // content (doc/storage.md; ContextKindsRestartTest checks that it dereferences)
        if (n.path("jsonldContext").asText().contains("/ngsi-ld/v1/jsonldContexts/")) {
            n.put("jsonldContext", "(an ImplicitlyCreated context of the broker)");
        }
        return n.toString();
    }

    private static String context(String kind) {
        return "{\"Car\": \"urn:test:Car\", \"speed\": \"urn:test:speed\", \"" + kind + "\": \"urn:test:" + kind + "\"}";
    }

    /** The path under /ngsi-ld/v1 of a context URL the broker gave. */
    private static String path(String url) {
        return url.substring(url.indexOf("/ngsi-ld/v1") + "/ngsi-ld/v1".length());
    }

    @ParameterizedTest(name = "after {0}")
    @ValueSource(strings = {"SIGTERM", "kill -9"})
    void subscriptionsAndRegistrationsMadeWithAContextTheBrokerServesSurvive(String how, @TempDir Path work) throws Exception {
        Path data = work.resolve("data");
        Map<String, String> before = new LinkedHashMap<>();
        try (ServerProcess s = ServerProcess.start(work, "--dataDir", data.toString())) {
            Map<String, String> links = new LinkedHashMap<>();
            HttpResponse<String> hosted = send(s, "POST", "/jsonldContexts", "application/json",
                    "{\"@context\": " + context("hostedDeleted") + "}");
            assertEquals(201, hosted.statusCode(), hosted.body());
            links.put("hostedDeleted", s.uri(hosted.headers().firstValue("Location").orElseThrow()).toString());
            HttpResponse<String> query = send(s, "POST", "/entityOperations/query", "application/ld+json",
                    "{\"type\": \"Query\", \"entities\": [{\"type\": \"Car\"}], \"@context\": " + context("implicit") + "}",
                    "Accept", "application/json");
            assertEquals(200, query.statusCode(), query.body());
            String link = query.headers().firstValue("Link").orElseThrow();
            links.put("implicit", link.substring(link.indexOf('<') + 1, link.indexOf('>')));
            for (Map.Entry<String, String> e : links.entrySet()) {
                String kind = e.getKey();
                String[] withLink = {"Link", "<" + e.getValue() + ">" + LINK};
                HttpResponse<String> r = send(s, "POST", "/subscriptions", "application/json", "{\"id\": \"urn:ngsi-ld:Subscription:"
                        + kind + "\", \"type\": \"Subscription\", \"entities\": [{\"type\": \"Car\"}],"
                        + " \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/notify\"}}}", withLink);
                assertEquals(201, r.statusCode(), r.body());
                r = send(s, "POST", "/csourceRegistrations", "application/json", "{\"id\": \"urn:ngsi-ld:ContextSourceRegistration:"
                        + kind + "\", \"type\": \"ContextSourceRegistration\", \"information\": [{\"entities\": [{\"type\": \"Car\"}],"
                        + " \"propertyNames\": [\"speed\"]}], \"endpoint\": \"http://127.0.0.1:9/source\"}", withLink);
                assertEquals(201, r.statusCode(), r.body());
            }
            assertEquals(204, send(s, "DELETE", path(links.get("hostedDeleted")), null, null).statusCode());
            for (String kind : links.keySet()) {
                for (String p : new String[] {"/subscriptions/urn:ngsi-ld:Subscription:" + kind,
                        "/csourceRegistrations/urn:ngsi-ld:ContextSourceRegistration:" + kind}) {
                    HttpResponse<String> r = send(s, "GET", p, null, null);
                    assertEquals(200, r.statusCode(), r.body());
                    before.put(p, definition(r.body()));
                }
            }
            if (how.equals("SIGTERM")) {
                s.process.destroy();
            } else {
                s.process.destroyForcibly();
            }
            assertTrue(s.process.waitFor(30, TimeUnit.SECONDS), "stopped");
        }
        try (ServerProcess s = ServerProcess.start(work, "--dataDir", data.toString())) {
            for (Map.Entry<String, String> e : before.entrySet()) {
                HttpResponse<String> r = send(s, "GET", e.getKey(), null, null);
                assertEquals(200, r.statusCode(), "after " + how + ": " + e.getKey() + " " + r.body() + "\n" + s);
                assertEquals(e.getValue(), definition(r.body()), "after " + how + ": " + e.getKey());
            }
            assertFalse((s.stdout() + s.stderr()).contains("cannot be restored"), s.toString());
        }
    }
}
