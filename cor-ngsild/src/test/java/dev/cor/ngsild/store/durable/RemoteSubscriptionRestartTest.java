package dev.cor.ngsild.store.durable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.net.http.HttpResponse;
import java.nio.file.Path;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import dev.cor.ngsild.BrokerHttp;
import dev.cor.ngsild.TestBroker;

/**
 * What a restart keeps of a distributed subscription (§ 5.8.1.4): the copies it made at its
 * sources. After a clean stop and after a crash, deleting the subscription still deletes its copy
 * at the source (§ 5.8.5.4) - which the broker can only do if it kept where the copy is and its id.
 */
class RemoteSubscriptionRestartTest {

    @ParameterizedTest(name = "after {0}")
    @ValueSource(strings = {"a clean stop", "a crash"})
    void theCopiesOfASubscriptionSurviveARestart(String how, @TempDir Path dir) throws Exception {
        String sub = "urn:ngsi-ld:Subscription:kept-copies";
        try (TestBroker source = TestBroker.start()) {
            BrokerHttp there = new BrokerHttp(source);
            DurableBroker broker = DurableBroker.open(dir);
            try {
                BrokerHttp http = broker.http;
                assertEquals(201, http.postJson("/csourceRegistrations", "{\"id\": \"urn:ngsi-ld:ContextSourceRegistration:s\","
                        + " \"type\": \"ContextSourceRegistration\", \"information\": [{\"entities\": [{\"type\": \"Vehicle\"}]}],"
                        + " \"operations\": [\"federationOps\"], \"endpoint\": \"" + source.origin() + "\"}").statusCode());
                HttpResponse<String> created = http.postJson("/subscriptions", "{\"id\": \"" + sub + "\", \"type\": \"Subscription\","
                        + " \"entities\": [{\"type\": \"Vehicle\"}], \"notification\": {\"endpoint\": {\"uri\": \"http://127.0.0.1:9/n\"}}}");
                assertEquals(201, created.statusCode(), created.body());
                assertEquals(1, copies(there), "the source holds the copy");
            } finally {
                if (how.equals("a crash")) {
                    broker.crash();
                } else {
                    broker.close();
                }
            }
            DurableBroker again = DurableBroker.open(dir);
            try {
                HttpResponse<String> kept = again.http.get("/subscriptions/" + sub);
                assertEquals(200, kept.statusCode(), kept.body());
                assertFalse(kept.body().contains("remoteCopies"), kept.body());
                assertEquals(204, again.http.send("DELETE", "/subscriptions/" + sub, null, null).statusCode());
                assertEquals(0, copies(there), "the delete after the restart reached the copy");
            } finally {
                again.close();
            }
        }
    }

    private static int copies(BrokerHttp there) throws Exception {
        HttpResponse<String> r = there.get("/subscriptions");
        assertEquals(200, r.statusCode(), r.body());
        return r.body().equals("[]") ? 0 : r.body().split("\"type\":\"Subscription\"").length - 1;
    }
}
