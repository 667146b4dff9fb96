package dev.cor.ngsild.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.conformance.Ngsi.Answer;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.ngsild.store.postgres.PostgresEntityStore;
import dev.cor.ngsild.store.postgres.SharedPostgres;

/**
 * The base of every black-box conformance test class: one broker ({@link TestBroker}) and one
 * {@link ContextServer} per test class, started before its first test and stopped after its last.
 * Tests share them and isolate themselves with fresh entity ids, fresh type names or fresh tenants.
 * <p>
 * A remote {@code @context} may take {@link #CONTEXT_TIMEOUT_MS} to download; a test that waits for
 * a context server that never answers waits that long.
 */
abstract class ConformanceTest {
    /** The broker's {@code contextTimeoutMs} in these tests. */
    static final long CONTEXT_TIMEOUT_MS = 2_500;

    static TestBroker broker;
    static ContextServer contexts;
    static Ngsi api;
    /** The absolute URL of the tests' user context ({@link ContextServer#MODEL}). */
    static String model;

    /** The PostgreSQL store the class's broker runs over, when the suites run against it ({@link SharedPostgres#asked()}). */
    static PostgresEntityStore postgres;

    @BeforeAll
    static void startBroker() {
        contexts = ContextServer.start();
        if (SharedPostgres.asked()) {
            postgres = SharedPostgres.newStore();
            broker = TestBroker.start(b -> b.contextTimeoutMs(CONTEXT_TIMEOUT_MS).store(postgres), s -> { });
        } else {
            broker = TestBroker.start(b -> b.contextTimeoutMs(CONTEXT_TIMEOUT_MS), s -> { });
        }
        api = new Ngsi(broker.baseUrl());
        model = contexts.url(ContextServer.MODEL);
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
            broker = null;
        }
        if (postgres != null) {
            postgres.close();
            postgres = null;
        }
        if (contexts != null) {
            contexts.close();
            contexts = null;
        }
    }

    /** The full IRI the tests' user context gives {@code term} ({@code https://cor.test/model#term}). */
    static String modelIri(String term) {
        return "https://cor.test/model#" + term;
    }

    /** The full IRI the core context's {@code @vocab} gives a term it does not define. */
    static String defaultIri(String term) {
        return "https://uri.etsi.org/ngsi-ld/default-context/" + term;
    }

    /** Creates {@code entity} as application/ld+json with the tests' user context; asserts the 201. */
    static void create(JsonNode entity) {
        String id = entity.get("id").asText();
        Checks.created(api.post("/entities").ldJson(Entities.withContext(entity.deepCopy(), model)).send(), id);
    }

    /** Creates {@code entity} as application/json under the core context alone; asserts the 201. */
    static void createPlain(JsonNode entity) {
        String id = entity.get("id").asText();
        Checks.created(api.post("/entities").json(entity).send(), id);
    }

    /** Creates a fresh {@link Entities#vehicle} with the user context; returns its id. */
    static String createdVehicle() {
        String id = Entities.id("Vehicle");
        create(Entities.vehicle(id));
        return id;
    }

    /** Creates a fresh {@link Entities#building} with the user context; returns its id. */
    static String createdBuilding() {
        String id = Entities.id("Building");
        create(Entities.building(id));
        return id;
    }

    /** The entity as application/json, normalized, compacted with the tests' user context; asserts the 200. */
    static JsonNode retrieve(String id) {
        return Checks.okJson(api.get(Ngsi.entity(id)).link(model).send(), model);
    }

    /** GET of the entity with the tests' user context and a query parameter, as application/json. */
    static Answer retrieve(String id, String param, String value) {
        return api.get(Ngsi.entity(id)).link(model).query(param, value).send();
    }

    /** Asserts the entity is (no longer) there: 404 ResourceNotFound. */
    static void assertGone(String id) {
        Checks.problem(api.get(Ngsi.entity(id)).link(model).send(), 404, "ResourceNotFound");
    }

    /** The durable store a subclass runs its cases over, in a directory of its own. */
    record DurableDir(DurableEntityStore store, Path dir) {
    }

    /**
     * Replaces the class's memory broker by one over a durable store in a fresh temporary
     * directory ({@code prefix} names it), so that a subclass runs every case of its parent there;
     * {@link #closeDurable} ends it.
     */
    static DurableDir overADurableStore(String prefix) throws IOException {
        Path dir = Files.createTempDirectory(prefix);
        DurableEntityStore store = DurableEntityStore.builder(dir).open();
        overStore(store);
        return new DurableDir(store, dir);
    }

    /** Replaces the class's memory broker by one over {@code store}, which the subclass closes after the broker. */
    static void overStore(EntityStore store) {
        broker.close();
        broker = TestBroker.start(b -> b.contextTimeoutMs(CONTEXT_TIMEOUT_MS).store(store), s -> { });
        api = new Ngsi(broker.baseUrl());
    }

    /** Closes the broker and the store of {@link #overADurableStore}, and deletes its directory. */
    static void closeDurable(DurableDir d) throws IOException {
        if (broker != null) {
            broker.close();
            broker = null;
        }
        d.store().close();
        try (var files = Files.walk(d.dir())) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
