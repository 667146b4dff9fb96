package dev.cor.server;

import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The requests the outbound tests make of a broker process: an entity whose {@code @context} is
 * a peer's, a subscription and a registration naming a peer, and what came of them. Stateless.
 */
final class OutboundCalls {
    private static final ObjectMapper JSON = new ObjectMapper();

    private OutboundCalls() {
    }

    /** POST /entities with {@code contextUrl} in the Link header. */
    static HttpResponse<String> createWithContext(ServerProcess s, String contextUrl) throws Exception {
        return s.send("POST", "/ngsi-ld/v1/entities", "{\"id\":\"urn:ngsi-ld:Car:" + System.nanoTime()
                + "\",\"type\":\"Car\",\"speed\":{\"type\":\"Property\",\"value\":1}}",
                "Link", "<" + contextUrl + ">; rel=\"http://www.w3.org/ns/json-ld#context\"; type=\"application/ld+json\"");
    }

    /** The ProblemDetails' detail of {@code r}. */
    static String detail(HttpResponse<String> r) throws Exception {
        return JSON.readTree(r.body()).path("detail").asText();
    }

    /** A subscription to entities of {@code type}, notified at {@code endpoint}. */
    static void subscribe(ServerProcess s, String id, String type, String endpoint) throws Exception {
        HttpResponse<String> r = s.send("POST", "/ngsi-ld/v1/subscriptions", "{\"id\":\"" + id + "\",\"type\":\"Subscription\","
                + "\"entities\":[{\"type\":\"" + type + "\"}],\"notification\":{\"endpoint\":{\"uri\":\"" + endpoint + "\"}}}");
        if (r.statusCode() != 201) {
            throw new AssertionError("subscription " + id + ": " + r.statusCode() + " " + r.body());
        }
    }

    /** An entity of {@code type}: what notifies the subscriptions to it. */
    static void create(ServerProcess s, String type) throws Exception {
        HttpResponse<String> r = s.send("POST", "/ngsi-ld/v1/entities", "{\"id\":\"urn:ngsi-ld:" + type + ":" + System.nanoTime()
                + "\",\"type\":\"" + type + "\"}");
        if (r.statusCode() != 201) {
            throw new AssertionError("entity of " + type + ": " + r.statusCode() + " " + r.body());
        }
    }

    /** The subscription's notification member once it has sent one (its status "ok" or "failed"); fails past 20 s. */
    static JsonNode notified(ServerProcess s, String id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            HttpResponse<String> r = s.send("GET", "/ngsi-ld/v1/subscriptions/" + id, null);
            JsonNode n = JSON.readTree(r.body()).path("notification");
            if (n.path("timesFailed").asInt() > 0 || n.has("lastSuccess")) {
                return n;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("subscription " + id + " sent nothing within 20 s: " + r.body());
            }
            Thread.sleep(20); // polling a status with a deadline
        }
    }

    /** A registration of entities of {@code type} at {@code endpoint}. */
    static void register(ServerProcess s, String id, String type, String endpoint) throws Exception {
        HttpResponse<String> r = s.send("POST", "/ngsi-ld/v1/csourceRegistrations", "{\"id\":\"" + id + "\","
                + "\"type\":\"ContextSourceRegistration\",\"information\":[{\"entities\":[{\"type\":\"" + type + "\"}]}],"
                + "\"endpoint\":\"" + endpoint + "\"}");
        if (r.statusCode() != 201) {
            throw new AssertionError("registration " + id + ": " + r.statusCode() + " " + r.body());
        }
    }

    /** GET /entities?type= - forwarded to the sources registered for it - answered 200: its NGSILD-Warning values, joined. */
    static String queryWarnings(ServerProcess s, String type) throws Exception {
        HttpResponse<String> r = s.send("GET", "/ngsi-ld/v1/entities?type=" + type, null);
        if (r.statusCode() != 200) {
            throw new AssertionError("query of " + type + ": " + r.statusCode() + " " + r.body());
        }
        return String.join(" | ", r.headers().allValues("NGSILD-Warning"));
    }

    /** Waits until the process's stderr holds {@code text} (a log line); fails past 20 s. */
    static void awaitLog(ServerProcess s, String text) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!s.stderr().contains(text) && !s.stdout().contains(text)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no log line with '" + text + "' within 20 s:\n" + s.stderr());
            }
            Thread.sleep(20); // polling a file with a deadline
        }
    }
}
