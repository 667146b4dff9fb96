package dev.cor.ngsild;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.policy.NgsildAuthorizer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The authorizer SPI ({@link CorNgsild.Builder#authorizer}): asked once per request, inline on the
 * loop that read it, with the tenant and the operation; its refusals are ProblemDetails, 401 with
 * the challenge it gave, and come before anything that could wait (an {@code @context} download)
 * or tell a refused client whether a tenant exists.
 */
class BrokerAuthorizerTest {
    private record Asked(String tenant, String operation, boolean read, boolean onLoop) {
    }

    private static final List<Asked> ASKED = new CopyOnWriteArrayList<>();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestBroker broker;
    private static BrokerHttp http;

    @BeforeAll
    static void start() {
        broker = TestBroker.start(b -> b.authorizer(r -> {
            ASKED.add(new Asked(r.tenant(), r.operation(), r.read(), CorCoLoop.current() != null));
            if (!"k".equals(r.headers().get("X-Key"))) {
                return NgsildAuthorizer.Decision.unauthorized("Key realm=\"test\"", "no key");
            }
            if (r.tenant().startsWith("other")) {
                return NgsildAuthorizer.Decision.forbidden("not your tenant");
            }
            return NgsildAuthorizer.Decision.allow();
        }), s -> { });
        http = new BrokerHttp(broker);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static Asked last() {
        return ASKED.get(ASKED.size() - 1);
    }

    @Test
    void theAuthorizerIsAskedOnTheLoopWithTheTenantAndTheOperation() throws Exception {
        assertEquals(201, http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:A:1\", \"type\": \"A\"}", "X-Key", "k",
                "NGSILD-Tenant", "t1").statusCode());
        assertEquals(new Asked("t1", "createEntity", false, true), last());
        assertEquals(200, http.get("/entities/urn:ngsi-ld:A:1", "X-Key", "k", "NGSILD-Tenant", "t1").statusCode());
        assertEquals(new Asked("t1", "retrieveEntity", true, true), last());
        assertEquals(200, http.get("/types", "X-Key", "k").statusCode());
        assertEquals(new Asked("", "retrieveEntityTypes", true, true), last());
    }

    @Test
    void aRefusalIsAProblemDetailsWithTheChallengeOn401() throws Exception {
        HttpResponse<String> r = http.get("/types");
        assertEquals(401, r.statusCode(), r.body());
        assertEquals("Key realm=\"test\"", r.headers().firstValue("WWW-Authenticate").orElse(null));
        JsonNode p = JSON.readTree(r.body());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/Unauthorized", p.path("type").asText());
        assertEquals(401, p.path("status").asInt());
        assertEquals("no key", p.path("detail").asText());
        HttpResponse<String> f = http.get("/types", "X-Key", "k", "NGSILD-Tenant", "other");
        assertEquals(403, f.statusCode(), f.body());
        assertFalse(f.headers().firstValue("WWW-Authenticate").isPresent());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/Forbidden", JSON.readTree(f.body()).path("type").asText());
    }

    @Test
    void aRefusedRequestLearnsNothingAboutTheTenant() throws Exception {
        assertEquals(201, http.postJson("/entities", "{\"id\": \"urn:ngsi-ld:A:2\", \"type\": \"A\"}", "X-Key", "k",
                "NGSILD-Tenant", "t2").statusCode());
        HttpResponse<String> existing = http.get("/types", "NGSILD-Tenant", "t2");
        HttpResponse<String> missing = http.get("/types", "NGSILD-Tenant", "t-none");
        assertEquals(401, existing.statusCode());
        assertEquals(existing.statusCode(), missing.statusCode());
        assertEquals(existing.body(), missing.body());
    }

    @Test
    void aRefusalComesInlineBeforeAContextDownloadCouldMakeItWait() throws Exception {
        long inline = broker.server().inlineCount();
        long coroutines = broker.server().coroutineCount();
        long hops = broker.server().hopCount();
        HttpResponse<String> r = http.get("/types", "Link", "<http://127.0.0.1:9/never.jsonld>; rel=\"http://www.w3.org/ns/json-ld#context\"");
        assertEquals(401, r.statusCode(), r.body());
        assertEquals(1, broker.server().inlineCount() - inline, "answered inline");
        assertEquals(0, broker.server().coroutineCount() - coroutines, "no coroutine for a refused request");
        assertEquals(0, broker.server().hopCount() - hops);
        assertTrue(last().onLoop());
    }
}
