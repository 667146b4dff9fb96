package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.store.EntityStore.Index;

/**
 * The statements of the query push-down take their indexes: on 20 000 entities of one tenant
 * (analyzed), {@code EXPLAIN (FORMAT JSON)} of the very statements {@link PgEntityStore} runs
 * ({@link PgEntityColumns}), with their parameters bound, shows the GIN index of the types for a
 * rare type (10 entities), that of the attributes for a rare attribute, the values' primary key for a numeric
 * range, the boxes' GiST index for a small box - and, for a type most entities have, a walk of
 * the primary key in id order with no sort (a page stops after its rows) - and no Seq Scan in any;
 * a size past {@link PgEntityStore#EXACT} is the planner's estimate, below it the count.
 * A change that drops an index, or writes a predicate the index cannot serve, fails here.
 */
class PgEntityQueryPlanTest {
    static final String TENANT = "plan";
    static final int N = 20_000;

    static PgDatabase db;

    @BeforeAll
    static void start() throws Exception {
        db = SharedPostgres.database(2, 5_000, 60_000); // a fresh database of the run's one cluster
        db.inTransaction(c -> PgSchema.MIGRATIONS.migrate(c));
        db.inTransaction(c -> {
            try (Statement st = c.createStatement()) {
                // records of 400 bytes (an entity's binary form is some hundreds); a type and an attribute of 200 entities each, rare ones of 10 each, a common type and attribute in every one
                st.execute("INSERT INTO cor_entities (tenant, id, types, attrs, doc) SELECT '" + TENANT + "',"
                        + " 'urn:ngsi-ld:E:' || lpad(g::text, 6, '0'), ARRAY['T' || (g % 100), 'R' || (g % 2000), 'Common'],"
                        + " ARRAY['a' || (g % 100), 'r' || (g % 2000), 'common', 'num', 'loc'], decode(repeat('ab', 400), 'hex') FROM generate_series(1, " + N + ") g");
                // a 0.01 degree box per entity on a 100 x 200 grid of 0.1 degree
                st.execute("INSERT INTO cor_entity_boxes (tenant, id, attribute, box) SELECT '" + TENANT + "',"
                        + " 'urn:ngsi-ld:E:' || lpad(g::text, 6, '0'), 'loc', box(point((g % 100) * 0.1, (g / 100) * 0.1),"
                        + " point((g % 100) * 0.1 + 0.01, (g / 100) * 0.1 + 0.01)) FROM generate_series(1, " + N + ") g");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO cor_entity_values (tenant, attribute, key, id) VALUES (?, ?, ?, ?)")) {
                for (int g = 1; g <= N; g++) {
                    ps.setString(1, TENANT);
                    ps.setString(2, "num");
                    ps.setBytes(3, key(g));
                    ps.setString(4, String.format("urn:ngsi-ld:E:%06d", g));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            try (Statement st = c.createStatement()) {
                st.execute("ANALYZE cor_entities");
                st.execute("ANALYZE cor_entity_values");
                st.execute("ANALYZE cor_entity_boxes");
            }
            return null;
        });
    }

    @AfterAll
    static void stop() {
        if (db != null) {
            db.close();
        }
    }

    /** The key of the number {@code n} as the write path computes it. */
    static byte[] key(double n) {
        Attribute a = new Attribute(AttributeKind.PROPERTY, JsonNodeFactory.instance.numberNode(n), null, null, null, null, null,
                Map.of(), 0, 0);
        ByteBuffer k = PgEntityColumns.keys(AttributeList.of(a)).iterator().next();
        return k.array();
    }

    /** The plan's nodes, depth first, as (node type, index name or ""). */
    static List<String> explain(String sql, Object... params) throws SQLException {
        return db.read(c -> {
            try (PreparedStatement ps = c.prepareStatement("EXPLAIN (FORMAT JSON) " + sql)) {
                for (int i = 0; i < params.length; i++) {
                    Object p = params[i];
                    if (p instanceof byte[] b) {
                        ps.setBytes(i + 1, b);
                    } else if (p instanceof Double d) {
                        ps.setDouble(i + 1, d);
                    } else if (p instanceof Integer n) {
                        ps.setInt(i + 1, n);
                    } else {
                        ps.setString(i + 1, (String) p);
                    }
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    JsonNode plan = new ObjectMapper().readTree(rs.getString(1)).get(0).get("Plan");
                    List<String> nodes = new ArrayList<>();
                    walk(plan, nodes);
                    System.out.println("PgEntityQueryPlanTest: " + sql + "\n  " + nodes);
                    return nodes;
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    throw new SQLException(e);
                }
            }
        });
    }

    private static void walk(JsonNode node, List<String> out) {
        out.add(node.path("Node Type").asText() + (node.has("Index Name") ? " on " + node.get("Index Name").asText() : ""));
        for (JsonNode child : node.path("Plans")) {
            walk(child, out);
        }
    }

    static void assertUses(List<String> plan, String node) {
        assertTrue(plan.contains(node), "the plan " + plan + " has no " + node);
        assertFalse(plan.contains("Seq Scan"), "the plan " + plan + " reads the whole table");
    }

    @Test
    void aRareTypeIsFoundThroughTheTypesIndex() throws SQLException {
        assertUses(explain(PgEntityColumns.scanPage(Index.TYPE), TENANT, "", "R7", 16), "Bitmap Index Scan on cor_entities_types");
    }

    @Test
    void aCommonTypeIsWalkedInIdOrderAndTheWalkStopsAtThePage() throws SQLException {
        List<String> plan = explain(PgEntityColumns.scanPage(Index.TYPE), TENANT, "", "Common", 16);
        assertEquals("Limit", plan.get(0), plan.toString());
        assertUses(plan, "Index Scan on cor_entities_pkey");
        assertFalse(plan.contains("Sort"), plan.toString());
    }

    @Test
    void aRareAttributeIsFoundThroughTheAttributesIndex() throws SQLException {
        assertUses(explain(PgEntityColumns.scanPage(Index.ATTRIBUTE), TENANT, "", "r7", 16),
                "Bitmap Index Scan on cor_entities_attrs");
    }

    @Test
    void aNumericRangeIsOneWalkOfTheValuesKey() throws SQLException {
        List<String> plan = explain(PgEntityColumns.valuesIn(1), TENANT, "num", key(100), key(150), 1_001);
        assertTrue(plan.contains("Index Only Scan on cor_entity_values_pkey") || plan.contains("Index Scan on cor_entity_values_pkey")
                || plan.contains("Bitmap Index Scan on cor_entity_values_pkey"), plan.toString());
        assertFalse(plan.contains("Seq Scan"), plan.toString());
    }

    @Test
    void twoRangesAreTwoWalksOfTheValuesKey() throws SQLException {
        List<String> plan = explain(PgEntityColumns.valuesIn(2), TENANT, "num", key(100), key(150), TENANT, "num", key(9_000),
                key(9_010), 1_001);
        assertEquals(2, plan.stream().filter(n -> n.endsWith("on cor_entity_values_pkey")).count(), plan.toString());
        assertFalse(plan.contains("Seq Scan"), plan.toString());
    }

    @Test
    void aSmallBoxIsFoundThroughTheBoxesIndex() throws SQLException {
        List<String> plan = explain(PgEntityColumns.BOXES, TENANT, "loc", 1.0, 1.0, 1.5, 1.5);
        assertTrue(plan.contains("Bitmap Index Scan on cor_entity_boxes_box") || plan.contains("Index Scan on cor_entity_boxes_box"),
                plan.toString());
        assertFalse(plan.contains("Seq Scan"), plan.toString());
    }

    @Test
    void aSizeIsCountedUpToTenThousandAndEstimatedPast() {
        PgEntityStore store = new PgEntityStore(db);
        assertEquals(10, store.size(TENANT, Index.TYPE, "R7"));
        assertEquals(200, store.size(TENANT, Index.ATTRIBUTE, "a7"));
        for (int n : new int[] {store.size(TENANT, Index.ALL, null), store.size(TENANT, Index.TYPE, "Common"),
                store.sizeInBox(TENANT, "loc", -1, -1, 100, 100)}) {
            // the planner's estimate of 20 000: its statistics are a sample, hence the margin
            assertTrue(n >= PgEntityStore.EXACT && n >= N / 2 && n <= 2 * N, Integer.toString(n));
        }
        assertEquals(0, store.size("no-such-tenant", Index.ALL, null));
    }
}
