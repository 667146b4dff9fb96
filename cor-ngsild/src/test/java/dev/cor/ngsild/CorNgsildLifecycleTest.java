package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** The broker's edges: closing everything whatever fails, and its status view. */
class CorNgsildLifecycleTest {

    @Test
    void closingRunsEveryCloseAndThrowsTheFirstFailureWithTheOthersSuppressed() {
        List<String> ran = new ArrayList<>();
        RuntimeException first = new IllegalStateException("first");
        RuntimeException second = new IllegalArgumentException("second");
        RuntimeException failed = null;
        failed = CorNgsild.closing(failed, () -> ran.add("a"));
        failed = CorNgsild.closing(failed, () -> {
            ran.add("b");
            throw first;
        });
        failed = CorNgsild.closing(failed, () -> {
            ran.add("c");
            throw second;
        });
        failed = CorNgsild.closing(failed, () -> ran.add("d"));
        assertEquals(List.of("a", "b", "c", "d"), ran);
        assertSame(first, failed);
        assertArrayEquals(new Throwable[] {second}, failed.getSuppressed());
    }

    @Test
    void theStatusViewCountsWhatTheRequestsMade() throws Exception {
        try (TestBroker broker = TestBroker.start()) {
            BrokerHttp http = new BrokerHttp(broker);
            assertEquals(201, http.postJson("/subscriptions", "{\"type\":\"Subscription\",\"entities\":[{\"type\":\"T\"}],"
                    + "\"notification\":{\"endpoint\":{\"uri\":\"http://127.0.0.1:9/n\"}}}").statusCode());
            assertEquals(201, http.postJson("/entities", "{\"id\":\"urn:e:1\",\"type\":\"T\"}", "NGSILD-Tenant", "t1").statusCode());
            assertEquals(201, http.postJson("/entities", "{\"id\":\"urn:e:2\",\"type\":\"T\"}", "NGSILD-Tenant", "t1").statusCode());
            NgsildStatus status = broker.broker().status();
            assertEquals(Set.of("", "t1"), status.tenants());
            assertEquals(2, status.entities("t1"));
            assertEquals(0, status.entities(""));
            assertEquals(1, status.subscriptions(""));
            assertEquals(0, status.subscriptions("t1"));
            assertEquals(0, status.registrations(""));
        }
    }
}
