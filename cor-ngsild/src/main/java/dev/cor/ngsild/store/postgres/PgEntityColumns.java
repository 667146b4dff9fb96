package dev.cor.ngsild.store.postgres;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.locationtech.jts.geom.Envelope;
import org.locationtech.jts.geom.Geometry;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.GeoQuery;
import dev.cor.ngsild.query.ValueKey;
import dev.cor.ngsild.query.ValueLookup;
import dev.cor.ngsild.store.EntityStore.Index;
import dev.cor.ngsild.store.postgres.PgMigrations.Migration;

/**
 * What the database answers queries from, beside the whole record ({@code doc}): computed here
 * from the record on every write, inside the write's transaction ({@link #update}), and the
 * statements {@link PgEntityStore} asks them with - so that the store and the tests that read
 * their plans run the same text. Owns three things:
 * <ul>
 * <li>{@code cor_entities.attrs}: the record's expanded attribute names, with a GIN index -
 * attribute presence ({@code attrs @> ARRAY[name]}), as {@code types} answers a type.</li>
 * <li>{@code cor_entity_values (tenant, attribute, key, id)}: one row per distinct
 * {@link ValueKey} of an attribute of an entity - the keys {@link ValueKey#forEach} gives, which
 * the memory store's value index holds (every instance, every array item, every language; not
 * sub-attributes) - its primary key a B-tree on (tenant, attribute, key, id). {@code key} is
 * {@link ValueKey#bytes} (a long text's first {@link #KEY_BYTES} bytes), whose byte order is
 * the keys' order, so one B-tree answers every range of every kind (numbers, booleans,
 * date-times, texts - and a range across kinds) with the memory index's very order: a range of a
 * {@link ValueLookup} is one index range, read index-only. A JSONB column of attribute to values was the other way: its GIN index answers
 * containment (equality) only, and a range needs a B-tree on an expression per attribute - DDL
 * per attribute, which comes and goes with writes; a value column per kind (a number, a text)
 * would need an index each and Java's order of texts (UTF-16 code units) is not a collation's.</li>
 * <li>{@code cor_entity_boxes (tenant, id, attribute, box)}: the bounding box of each
 * GeoProperty instance's geometry ({@link GeoQuery#target}, as the exact test reads it), with a
 * GiST index on {@code box} - PostgreSQL's own type, no extension. The store's spatial question
 * is a box ({@link dev.cor.ngsild.store.EntityStore#idsInBox}): {@code box && box} in a GiST
 * answers it as PostGIS's {@code geometry && geometry} would (both compare bounding boxes), so
 * PostGIS would add an extension to install (not a trusted one: a superuser's act), a schema that
 * differs by database, and a second path to test, for the same superset; the exact relation is
 * the broker's filter after.</li>
 * </ul>
 * A write moves only what changed: the keys and boxes of the attributes whose lists the change
 * replaced, found by difference against the record before (which the write read under its lock,
 * so the rows are exactly the record's). No state; any thread.
 */
final class PgEntityColumns {
    /**
     * The query columns and tables. A database whose entities were written before them would have
     * none of their rows, and answer queries wrong: it is refused (the store was offered by no
     * launcher before these columns, so no such database should exist).
     */
    static final Migration MIGRATION = new Migration(3, "query columns", List.of(
            "DO $$ BEGIN IF EXISTS (SELECT 1 FROM cor_entities) THEN RAISE EXCEPTION 'cor_entities holds entities written before"
                    + " the query columns, which this migration cannot compute (they are Java''s): load them again into a new"
                    + " database'; END IF; END $$",
            "ALTER TABLE cor_entities ADD COLUMN attrs text[] NOT NULL",
            "CREATE INDEX cor_entities_attrs ON cor_entities USING gin (attrs)",
            "CREATE TABLE cor_entity_values (tenant text COLLATE \"C\" NOT NULL, attribute text COLLATE \"C\" NOT NULL,"
                    + " key bytea NOT NULL, id text COLLATE \"C\" NOT NULL, PRIMARY KEY (tenant, attribute, key, id))",
            "CREATE TABLE cor_entity_boxes (tenant text COLLATE \"C\" NOT NULL, id text COLLATE \"C\" NOT NULL,"
                    + " attribute text COLLATE \"C\" NOT NULL, box box NOT NULL)",
            // a write replaces an attribute's boxes: found by entity
            "CREATE INDEX cor_entity_boxes_entity ON cor_entity_boxes (tenant, id, attribute)",
            "CREATE INDEX cor_entity_boxes_box ON cor_entity_boxes USING gist (box)"));

    private PgEntityColumns() {
    }

    /** The entity's expanded attribute names, for {@code attrs}. */
    static String[] attrs(Entity e) {
        return e.attributes().keySet().toArray(String[]::new);
    }

    /**
     * Moves the id's rows in the value and box tables from {@code before}'s to {@code after}'s
     * (either {@code null}: no entity), inside the write's transaction.
     */
    static void update(Connection c, String tenant, String id, Entity before, Entity after) throws SQLException {
        Set<String> names = new LinkedHashSet<>();
        if (before != null) {
            names.addAll(before.attributes().keySet());
        }
        if (after != null) {
            names.addAll(after.attributes().keySet());
        }
        PreparedStatement deleteValue = null;
        PreparedStatement insertValue = null;
        PreparedStatement deleteBoxes = null;
        PreparedStatement insertBox = null;
        try {
            for (String name : names) {
                AttributeList b = before == null ? null : before.attributes().get(name);
                AttributeList a = after == null ? null : after.attributes().get(name);
                if (a == b) {
                    continue; // the change left this attribute's list as it was
                }
                Set<ByteBuffer> old = keys(b);
                Set<ByteBuffer> now = keys(a);
                for (ByteBuffer k : old) {
                    if (!now.contains(k)) {
                        deleteValue = batch(c, deleteValue,
                                "DELETE FROM cor_entity_values WHERE tenant = ? AND attribute = ? AND key = ? AND id = ?");
                        add(deleteValue, tenant, name, k, id);
                    }
                }
                for (ByteBuffer k : now) {
                    if (!old.contains(k)) {
                        insertValue = batch(c, insertValue, "INSERT INTO cor_entity_values (tenant, attribute, key, id) VALUES (?, ?, ?, ?)");
                        add(insertValue, tenant, name, k, id);
                    }
                }
                List<List<Double>> oldBoxes = boxes(b);
                List<List<Double>> newBoxes = boxes(a);
                if (!oldBoxes.equals(newBoxes)) {
                    if (!oldBoxes.isEmpty()) {
                        deleteBoxes = batch(c, deleteBoxes, "DELETE FROM cor_entity_boxes WHERE tenant = ? AND id = ? AND attribute = ?");
                        deleteBoxes.setString(1, tenant);
                        deleteBoxes.setString(2, id);
                        deleteBoxes.setString(3, name);
                        deleteBoxes.addBatch();
                    }
                    for (List<Double> box : newBoxes) {
                        insertBox = batch(c, insertBox, "INSERT INTO cor_entity_boxes (tenant, id, attribute, box)"
                                + " VALUES (?, ?, ?, box(point(?, ?), point(?, ?)))");
                        insertBox.setString(1, tenant);
                        insertBox.setString(2, id);
                        insertBox.setString(3, name);
                        for (int i = 0; i < 4; i++) {
                            insertBox.setDouble(4 + i, box.get(i));
                        }
                        insertBox.addBatch();
                    }
                }
            }
            // deletes first: an attribute whose boxes are replaced loses the old ones before it gets the new
            for (PreparedStatement ps : new PreparedStatement[] {deleteValue, insertValue, deleteBoxes, insertBox}) {
                if (ps != null) {
                    ps.executeBatch();
                }
            }
        } finally {
            for (PreparedStatement ps : new PreparedStatement[] {deleteValue, insertValue, deleteBoxes, insertBox}) {
                if (ps != null) {
                    ps.close();
                }
            }
        }
    }

    private static PreparedStatement batch(Connection c, PreparedStatement ps, String sql) throws SQLException {
        return ps != null ? ps : c.prepareStatement(sql);
    }

    private static void add(PreparedStatement ps, String tenant, String attribute, ByteBuffer key, String id) throws SQLException {
        ps.setString(1, tenant);
        ps.setString(2, attribute);
        ps.setBytes(3, key.array());
        ps.setString(4, id);
        ps.addBatch();
    }

    /**
     * How many bytes of a key the values' B-tree holds: an entry of a B-tree must fit a third of a
     * page (2704 bytes, with the tenant, attribute and id beside it), and a text value can be
     * longer. A longer key is kept as its first {@value} bytes - never above the key, and, as a
     * prefix keeps order, not below the prefix of any key below it - so a lookup that takes the
     * prefix of its low bound ({@link #low}) finds every entity it would have, and perhaps a few
     * more with the same prefix: a superset, as the caller tests each.
     */
    static final int KEY_BYTES = 256;

    /** The distinct keys of an attribute's values ({@link ValueKey#forEach}), as the B-tree holds them; none for {@code null}. */
    static Set<ByteBuffer> keys(AttributeList l) {
        if (l == null) {
            return Set.of();
        }
        Set<ByteBuffer> out = new HashSet<>(4);
        ValueKey.forEach(l, k -> out.add(ByteBuffer.wrap(low(k))));
        return out;
    }

    /** A key as the B-tree holds it, or a range's low bound as a lookup gives it: at most {@link #KEY_BYTES} bytes. */
    static byte[] low(ValueKey k) {
        byte[] b = k.bytes();
        return b.length <= KEY_BYTES ? b : java.util.Arrays.copyOf(b, KEY_BYTES);
    }

    /**
     * The distinct bounding boxes, [minLon, minLat, maxLon, maxLat], of the geometries of an
     * attribute's GeoProperty instances that the exact test can read ({@link GeoQuery#target}: one
     * it cannot read never matches), in the instances' order.
     */
    static List<List<Double>> boxes(AttributeList l) {
        if (l == null) {
            return List.of();
        }
        List<List<Double>> out = new ArrayList<>(1);
        for (Attribute i : l.instances()) {
            if (i.kind() != AttributeKind.GEO_PROPERTY) {
                continue;
            }
            Geometry g = GeoQuery.target(i.value());
            Envelope e = g == null ? null : g.getEnvelopeInternal();
            if (e == null || e.isNull()) {
                continue;
            }
            List<Double> box = List.of(e.getMinX(), e.getMinY(), e.getMaxX(), e.getMaxY());
            if (!out.contains(box)) {
                out.add(box);
            }
        }
        return out;
    }

    // The statements that read them; parameters in the order each says.

    /**
     * One page of a scan, in id order: (tenant, the last id of the page before - "" first: an id
     * is a URI, never empty -, [the type or attribute], how many). Keyset pages, not one cursor:
     * a statement is planned for every row it could return, so for a type of a few percent
     * PostgreSQL reads all its rows through the GIN index and sorts them before the first arrives
     * (EXPLAIN on 20 000 entities, a type of 200: Sort over Bitmap Heap Scan); with a LIMIT it
     * walks the primary key in id order and stops once the page is full, or - for a rare key -
     * takes the GIN index and sorts the few. No transaction stays open while the visitor runs.
     */
    static String scanPage(Index index) {
        return "SELECT id, doc FROM cor_entities WHERE tenant = ? AND id > ?" + predicate(index) + " ORDER BY id LIMIT ?";
    }

    /** What selects an index's entities beside the tenant: (the type or attribute) unless ALL. */
    static String predicate(Index index) {
        return switch (index) {
            case ALL -> "";
            case TYPE -> " AND types @> ARRAY[?::text]";
            case ATTRIBUTE -> " AND attrs @> ARRAY[?::text]";
        };
    }

    /** The keys of an index present in a tenant: (tenant). Reads every row of the tenant: GIN keeps no list of its keys by tenant. */
    static String keys(Index index) {
        return "SELECT DISTINCT unnest(" + (index == Index.TYPE ? "types" : "attrs") + ") FROM cor_entities WHERE tenant = ?";
    }

    /**
     * The ids of the entries in a lookup's {@code ranges} ranges, at most as many as the last
     * parameter says: (tenant, attribute, low, high) per range, then the limit. Each range is
     * one walk of the primary key (an index-only scan); UNION ALL and the LIMIT above them stop
     * reading once enough came - an entry in two overlapping ranges counts twice, as it does in
     * the memory index.
     */
    static String valuesIn(int ranges) {
        StringBuilder sql = new StringBuilder("SELECT id FROM (");
        for (int i = 0; i < ranges; i++) {
            sql.append(i == 0 ? "" : " UNION ALL ").append(
                    "SELECT id FROM cor_entity_values WHERE tenant = ? AND attribute = ? AND key BETWEEN ? AND ?");
        }
        return sql.append(") v LIMIT ?").toString();
    }

    /** The ranges of a lookup that hold anything: low not above high. */
    static List<ValueLookup.Range> ranges(ValueLookup lookup) {
        return lookup.ranges().stream().filter(r -> r.low().compareTo(r.high()) <= 0).toList();
    }

    /** The entities with a box of the GeoProperty that touches the box asked: (tenant, attribute, minLon, minLat, maxLon, maxLat). */
    static final String BOXES = "SELECT DISTINCT id FROM cor_entity_boxes WHERE tenant = ? AND attribute = ?"
            + " AND box && box(point(?, ?), point(?, ?))";

    /** {@link #BOXES}' rows (an id once per box), for a bounded count. */
    static final String BOX_ROWS = "SELECT 1 FROM cor_entity_boxes WHERE tenant = ? AND attribute = ?"
            + " AND box && box(point(?, ?), point(?, ?))";
}
