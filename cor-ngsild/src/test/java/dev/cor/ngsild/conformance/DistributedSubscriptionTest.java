package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.ManualClock;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.federation.Registration.Mode;
import org.junit.jupiter.api.Test;

/**
 * Distributed subscriptions (ETSI GS CIM 009 § 5.8.1.4, § 5.8.5.4, § 5.8.6) between real brokers
 * and stub sources over real sockets: a subscription's copy at each source that takes
 * createSubscription, its subscription to registrations beside it, its update and delete
 * forwarded, notifications from the other side, and copies made once under concurrency.
 * Registrations are created as a client would: {@code POST /csourceRegistrations}.
 */
class DistributedSubscriptionTest extends DistributedFixture {
    // ---------------------------------------------------------------- distributed subscriptions, § 5.8.1.4

    /** A source that takes subscriptions: 201 to a create, 204 to a delete; what it got is in {@code seen()}. */
    private SourceStub subscriptionSource() {
        return stub(req -> new SourceStub.Answer(req.method().equals("POST") ? 201 : 204, null, 0));
    }

    private static List<SourceStub.Seen> posts(SourceStub s) {
        return s.seen().stream().filter(q -> q.method().equals("POST")).toList();
    }

    /**
     * Waits up to 5 s for the notification of subscription to registrations {@code id} sent at
     * {@code atMs} (the broker's manual clock) to be answered: its {@code lastSuccess} is that time.
     */
    private static void awaitNotified(Node n, String id, long atMs) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        JsonNode s = null;
        while (System.nanoTime() < end) {
            s = n.api().get("/csourceSubscriptions/" + id).send().json();
            String last = s.path("notification").path("lastSuccess").asText(null);
            if (last != null && java.time.Instant.parse(last).toEpochMilli() == atMs) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no notification of " + id + " sent at " + java.time.Instant.ofEpochMilli(atMs)
                + " was answered within 5 s: " + s);
    }

    /** Waits up to 5 s for {@code s} to have seen {@code n} requests of {@code method}. */
    private static List<SourceStub.Seen> await(SourceStub s, String method, int n) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        List<SourceStub.Seen> got;
        while ((got = s.seen().stream().filter(q -> q.method().equals(method)).toList()).size() < n && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        return got;
    }

    private static String subscription(String id, String extra, String endpoint) {
        return ("{\"id\":\"%s\",\"type\":\"Subscription\",\"entities\":[{\"type\":\"Vehicle\"}]%s,"
                + "\"notification\":{\"endpoint\":{\"uri\":\"%s\"}}}").formatted(id, extra, endpoint);
    }

    /**
     * 5814_01_01 (§ 5.8.1.4, 5.8.5.4): a subscription is made at the source too - reduced to its
     * slice, its notifications addressed to this broker, never to the subscriber - with a
     * subscription to registrations beside it; deleting it deletes the copy (by its id there) and that.
     */
    @Test
    void a_subscription_is_copied_to_its_source_and_its_delete_forwarded() throws Exception {
        Node a = broker("S1");
        SourceStub src = subscriptionSource();
        reg(a, Mode.INCLUSIVE, src.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        String id = fresh("Subscription");
        Answer created = a.api().post("/subscriptions").json(Json.parse(subscription(id, ",\"q\":\"speed>50\"",
                "http://original.subscriber.example:9998/notify"))).send();
        assertEquals(201, created.status(), created.toString());
        List<SourceStub.Seen> copies = posts(src);
        assertEquals(1, copies.size(), copies.toString());
        SourceStub.Seen copy = copies.get(0);
        assertEquals("/ngsi-ld/v1/subscriptions", copy.target());
        assertTrue(copy.body().contains("remote-notify"), copy.body());
        assertFalse(copy.body().contains("original.subscriber.example"), copy.body());
        JsonNode body = Json.parse(copy.body());
        String remoteId = body.path("id").asText();
        assertTrue(remoteId.startsWith(id + ":"), "the copy has an id of its own: " + remoteId);
        assertEquals("speed>50", body.path("q").asText(), "without splitEntities the copy keeps q: " + body);
        assertEquals("Vehicle", body.path("entities").get(0).path("type").asText(), body.toString());
        assertFalse(body.has("status") || body.path("notification").has("timesSent"), "no status of ours: " + body);
        assertEquals("1.1 S1", copy.header("Via"));
        JsonNode own = a.api().get("/subscriptions/" + id).send().json();
        assertFalse(own.toString().contains(remoteId), "the copies are the broker's business: " + own);
        assertEquals("http://original.subscriber.example:9998/notify", own.path("notification").path("endpoint").path("uri").asText());

        JsonNode sources = a.api().get("/csourceSubscriptions").send().json();
        assertEquals(1, sources.size(), "§ 5.11.2: a subscription to registrations beside it: " + sources);

        Answer deleted = a.api().delete("/subscriptions/" + id).send();
        assertEquals(204, deleted.status(), deleted.toString());
        List<SourceStub.Seen> deletes = await(src, "DELETE", 1);
        assertEquals(1, deletes.size(), src.seen().toString());
        assertEquals("/ngsi-ld/v1/subscriptions/" + remoteId, deletes.get(0).target());
        assertEquals(0, a.api().get("/csourceSubscriptions").send().json().size());
    }

    /**
     * 5814_01_02 (§ 5.8.6): with splitEntities the copy carries no q; a notified fragment is
     * merged with this broker's entity, judged by the whole q, and sent on under the local id;
     * one that fails q after the merge is not sent. An id not given out is 404.
     */
    @Test
    void split_entities_fragments_are_merged_here_and_judged_by_q() throws Exception {
        Node a = broker("S2");
        SourceStub src = subscriptionSource();
        NotificationReceiver receiver = NotificationReceiver.start();
        open.add(receiver);
        reg(a, Mode.INCLUSIVE, src.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        String id = fresh("Subscription");
        Answer created = a.api().post("/subscriptions").json(Json.parse(subscription(id,
                ",\"q\":\"speed>50;brandName==%22Tesla%22\",\"splitEntities\":true", receiver.url()))).send();
        assertEquals(201, created.status(), created.toString());
        String copy = posts(src).get(0).body();
        assertFalse(copy.contains("\"q\""), copy);
        assertTrue(copy.contains("\"splitEntities\":true"), copy);
        String remoteId = Json.parse(copy).path("id").asText();

        String vehicle = fresh("Vehicle");
        create(a, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"brandName\":{\"type\":\"Property\",\"value\":\"Tesla\"}}".formatted(vehicle));
        String fragment = "{\"type\":\"Notification\",\"subscriptionId\":\"%s\",\"data\":[{\"id\":\"%s\",\"type\":\"Vehicle\","
                + "\"speed\":{\"type\":\"Property\",\"value\":%d}}]}";
        Answer in = new Ngsi(a.broker().origin() + "/ngsi-ld/ex").post("/remote-notify")
                .json(Json.parse(fragment.formatted(remoteId, vehicle, 99))).send();
        assertEquals(200, in.status(), in.toString());
        NotificationReceiver.Received got = receiver.next(5_000);
        String text = got.json().toString();
        assertTrue(text.contains(vehicle) && text.contains("Tesla") && text.contains("99"), text);
        assertEquals(id, got.json().path("subscriptionId").asText(), text);
        assertFalse(text.contains(remoteId), text);

        Answer failing = new Ngsi(a.broker().origin() + "/ngsi-ld/ex").post("/remote-notify")
                .json(Json.parse(fragment.formatted(remoteId, vehicle, 10))).send();
        assertEquals(200, failing.status(), failing.toString());
        // speed 10 fails q once merged: the next fragment, which passes, is the next notification, alone
        Answer passing = new Ngsi(a.broker().origin() + "/ngsi-ld/ex").post("/remote-notify")
                .json(Json.parse(fragment.formatted(remoteId, vehicle, 77))).send();
        assertEquals(200, passing.status(), passing.toString());
        JsonNode next = receiver.next(5_000).json().path("data");
        assertEquals(1, next.size(), next::toString);
        assertEquals(77, next.path(0).path("speed").path("value").asInt(), "speed 10 was not sent: " + next);
        Answer unknown = new Ngsi(a.broker().origin() + "/ngsi-ld/ex").post("/remote-notify")
                .json(Json.parse(fragment.formatted("urn:ngsi-ld:Subscription:never-given", vehicle, 99))).send();
        assertEquals(404, unknown.status(), unknown.toString());
    }

    /** Two real brokers: a subscription on A sees a change made on B, under A's subscription id; its update and delete reach B. */
    @Test
    void a_subscription_on_one_broker_is_notified_of_a_change_on_the_other() throws Exception {
        Node a = broker("S3A");
        Node b = broker("S3B");
        NotificationReceiver receiver = NotificationReceiver.start();
        open.add(receiver);
        reg(a, Mode.INCLUSIVE, b.broker().origin(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        String id = fresh("Subscription");
        assertEquals(201, a.api().post("/subscriptions").json(Json.parse(subscription(id, "", receiver.url()))).send().status());
        assertEquals(1, b.api().get("/subscriptions").send().json().size(), "B holds the copy");
        String vehicle = fresh("Vehicle");
        create(b, "{\"id\":\"%s\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":80}}".formatted(vehicle));
        NotificationReceiver.Received got = receiver.next(5_000);
        assertEquals(id, got.json().path("subscriptionId").asText(), got.json().toString());
        assertEquals(vehicle, got.json().path("data").get(0).path("id").asText(), got.json().toString());
        assertEquals(80, got.json().path("data").get(0).path("speed").path("value").asInt(), got.json().toString());

        // § 5.8.2: an update reaches the copy, which keeps notifying this broker - a notification
        // replaces the copy's whole (§ 5.5.8), so it goes with the copy's own endpoint
        Answer patched = a.api().patch("/subscriptions/" + id).json(Json.parse("{\"q\":\"speed>100\",\"notification\":"
                + "{\"format\":\"concise\",\"endpoint\":{\"uri\":\"http://127.0.0.1:9/elsewhere\"}}}")).send();
        assertEquals(204, patched.status(), patched.toString());
        JsonNode copy = b.api().get("/subscriptions").send().json().get(0);
        assertEquals("speed>100", copy.path("q").asText(), copy.toString());
        assertEquals("concise", copy.path("notification").path("format").asText(), copy.toString());
        assertTrue(copy.path("notification").path("endpoint").path("uri").asText().endsWith("/ngsi-ld/ex/remote-notify"),
                copy.toString());

        assertEquals(204, a.api().delete("/subscriptions/" + id).send().status());
        assertEquals(0, b.api().get("/subscriptions").send().json().size(), "the copy is deleted with it");
    }

    /**
     * A source that refuses the copy leaves the subscription here as it is (201); a source
     * registered later gets its copy - one - through the subscription to registrations (§ 5.11.2).
     */
    @Test
    void a_refused_copy_keeps_the_subscription_and_a_later_source_gets_one() throws Exception {
        ManualClock clock = new ManualClock(1_800_000_000_000L); // the notifications' lastSuccess tells which one was answered
        Node a = broker("S4", clock);
        SourceStub refusing = stub(req -> new SourceStub.Answer(500, "{}", 0));
        SourceStub later = subscriptionSource();
        reg(a, Mode.INCLUSIVE, refusing.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        String id = fresh("Subscription");
        Answer created = a.api().post("/subscriptions").json(Json.parse(subscription(id, "", "http://127.0.0.1:9/n"))).send();
        assertEquals(201, created.status(), created.toString());
        // the refusing source was asked (and is asked again when registrations are notified: it has no copy yet)
        assertFalse(posts(refusing).isEmpty(), refusing.seen().toString());
        assertEquals(200, a.api().get("/subscriptions/" + id).send().status());
        // the subscription to registrations has told this broker of the refusing source: that notification is done
        awaitNotified(a, id + ":sources", clock.millis());

        clock.advance(1_000);
        reg(a, Mode.INCLUSIVE, later.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        List<SourceStub.Seen> copies = await(later, "POST", 1);
        assertEquals(1, copies.size(), "the source registered later gets the copy: " + later.seen());
        assertTrue(Json.parse(copies.get(0).body()).path("id").asText().startsWith(id + ":"), copies.get(0).body());
        // the barrier: the notification of the later registration - the one that could make a second copy - was
        // answered (each notification of a subscription is answered before the next is sent), so it came and went
        awaitNotified(a, id + ":sources", clock.millis());
        assertEquals(1, posts(later).size(), "one copy, however many notifications of registrations came: " + later.seen());
    }

    /** A source registered after the subscription, with none before it, gets its copy - and the delete. */
    @Test
    void a_subscription_made_before_any_source_is_copied_when_one_registers() throws Exception {
        Node a = broker("S6");
        SourceStub src = subscriptionSource();
        String id = fresh("Subscription");
        assertEquals(201, a.api().post("/subscriptions").json(Json.parse(subscription(id, "", "http://127.0.0.1:9/n"))).send().status());
        assertEquals(0, src.seen().size());
        reg(a, Mode.INCLUSIVE, src.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        List<SourceStub.Seen> copies = await(src, "POST", 1);
        assertEquals(1, copies.size(), src.seen().toString());
        String remoteId = Json.parse(copies.get(0).body()).path("id").asText();
        assertTrue(remoteId.startsWith(id + ":"), remoteId);
        reg(a, Mode.INCLUSIVE, fresh("x").replace("urn:ngsi-ld:x:", "http://127.0.0.1:9/"), null, "Building", Set.of(), null,
                "[\"federationOps\"]");
        assertEquals(1, posts(src).size(), "another registration makes no second copy here");
        assertEquals(204, a.api().delete("/subscriptions/" + id).send().status());
        assertEquals("/ngsi-ld/v1/subscriptions/" + remoteId, await(src, "DELETE", 1).get(0).target());
    }

    /** 16 subscriptions created at once against one source: each gets exactly one copy, the copies' ids distinct. */
    @Test
    void concurrent_subscriptions_each_get_one_copy() throws Exception {
        Node a = broker("S5");
        SourceStub src = subscriptionSource();
        reg(a, Mode.INCLUSIVE, src.endpoint(), null, "Vehicle", Set.of(), null, "[\"federationOps\"]");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            ids.add(fresh("Subscription"));
        }
        List<Integer> statuses = java.util.Collections.synchronizedList(new ArrayList<>());
        try (var pool = java.util.concurrent.Executors.newFixedThreadPool(16)) {
            for (String id : ids) {
                pool.submit(() -> statuses.add(a.api().post("/subscriptions")
                        .json(Json.parse(subscription(id, "", "http://127.0.0.1:9/n"))).send().status()));
            }
        }
        assertEquals(java.util.Collections.nCopies(16, 201), statuses);
        List<SourceStub.Seen> copies = await(src, "POST", 16);
        assertEquals(16, copies.size());
        Set<String> remote = new java.util.HashSet<>();
        Set<String> parents = new java.util.HashSet<>();
        for (SourceStub.Seen c : copies) {
            String rid = Json.parse(c.body()).path("id").asText();
            remote.add(rid);
            parents.add(rid.substring(0, rid.lastIndexOf(':')));
        }
        assertEquals(16, remote.size(), "distinct remote ids");
        assertEquals(Set.copyOf(ids), parents, "one copy per subscription");
    }
}
