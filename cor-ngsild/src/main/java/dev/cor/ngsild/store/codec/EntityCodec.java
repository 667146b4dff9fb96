package dev.cor.ngsild.store.codec;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.rest.CorRestJson;

/**
 * An entity record and a JSON tree in the store's binary form ({@code doc/storage.md}, "Entity"
 * and "JSON value"): every field of the model, nothing rendered, so that a record read back is
 * the record written - the same names, kinds, values (a JSON number keeps its Jackson node type),
 * metadata and times. A decoder shares the instances of repeated names (types, attribute names,
 * object member names): a million entities of one type hold one copy of each name; an encoder
 * keeps the bytes of the names it wrote. One instance per thread.
 */
public final class EntityCodec {
    // JSON value tags: a Jackson node type each, so that a value reads back as the node it was
    private static final int J_NULL = 0;
    private static final int J_FALSE = 1;
    private static final int J_TRUE = 2;
    private static final int J_INT = 3;
    private static final int J_LONG = 4;
    private static final int J_DOUBLE = 5;
    private static final int J_TEXT = 6;
    private static final int J_ARRAY = 7;
    private static final int J_OBJECT = 8;
    private static final int J_BIG_INTEGER = 9;
    private static final int J_DECIMAL = 10;
    private static final int J_FLOAT = 11;
    private static final int J_SHORT = 12;
    /** Any other node (binary, a POJO): its JSON text, read back with the runtime's mapper. */
    private static final int J_TEXT_JSON = 13;

    /** A JSON tree nested deeper than this is refused on reading (the API bounds it far lower). */
    private static final int MAX_DEPTH = 512;
    /** How many distinct names a decoder shares before it stops adding more. */
    private static final int MAX_NAMES = 1 << 16;

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Map<String, String> names = new HashMap<>();
    /** The encoded form (length and bytes) of names written before: every record repeats them. */
    private final Map<String, byte[]> encodedNames = new HashMap<>();
    private final ByteSink scratch = new ByteSink(256);

    // ---------------------------------------------------------------- writing

    public void writeEntity(ByteSink out, Entity e) {
        out.string(e.id());
        names(out, e.types());
        names(out, e.scopes());
        out.zigzag(e.createdAt());
        out.zigzag(e.modifiedAt());
        attributes(out, e.attributes());
    }

    /** Writes a list of names (types, scopes): {@code varint} n, n {@code string}s. */
    public void writeNames(ByteSink out, List<String> l) {
        names(out, l);
    }

    /** Reads what {@link #writeNames} wrote, the names shared. */
    public List<String> readNames(ByteSource in) throws ByteSource.Malformed {
        return names(in);
    }

    /** Writes one attribute instance as an entity record holds it (a history chunk's and record's instances). */
    public void writeAttribute(ByteSink out, Attribute a) {
        attribute(out, a);
    }

    /** Reads what {@link #writeAttribute} wrote. */
    public Attribute readAttribute(ByteSource in) throws ByteSource.Malformed {
        return attribute(in, 0);
    }

    /**
     * Passes over what {@link #writeAttribute} wrote, building nothing: for a read that needs some
     * of the attributes in a run of them. Walks the same fields as {@link #readAttribute}.
     */
    public void skipAttribute(ByteSource in) throws ByteSource.Malformed {
        skipAttribute(in, 0);
    }

    private static void skipAttribute(ByteSource in, int depth) throws ByteSource.Malformed {
        kind(in.u8());
        skipJson(in, 0);
        in.skipNullableString(); // datasetId
        in.skipNullableString(); // observedAt
        in.skipNullableString(); // unitCode
        for (int k = 0; k < 2; k++) { // valueType, objectType
            switch (in.u8()) {
                case 0 -> { }
                case 1 -> skipJson(in, 0);
                default -> throw new ByteSource.Malformed("a nullable value's flag is neither 0 nor 1");
            }
        }
        int n = in.varint();
        if (n > 0 && depth + 1 > MAX_DEPTH) {
            throw new ByteSource.Malformed("sub-attributes nested deeper than " + MAX_DEPTH);
        }
        for (int i = 0; i < n; i++) {
            in.skipString();
            int count = in.varint();
            if (count == 0) {
                throw new ByteSource.Malformed("a sub-attribute has no instance");
            }
            for (int j = 0; j < count; j++) {
                skipAttribute(in, depth + 1);
            }
        }
        in.zigzag(); // createdAt
        in.zigzag(); // modifiedAt
    }

    private static void skipJson(ByteSource in, int depth) throws ByteSource.Malformed {
        if (depth > MAX_DEPTH) {
            throw new ByteSource.Malformed("a JSON value nested deeper than " + MAX_DEPTH);
        }
        int tag = in.u8();
        switch (tag) {
            case J_NULL, J_FALSE, J_TRUE -> { }
            case J_INT, J_SHORT, J_LONG -> in.varlong();
            case J_DOUBLE -> in.skip(8);
            case J_FLOAT -> in.skip(4);
            case J_TEXT, J_BIG_INTEGER, J_DECIMAL, J_TEXT_JSON -> in.skipString();
            case J_ARRAY -> {
                int n = in.varint();
                for (int i = 0; i < n; i++) {
                    skipJson(in, depth + 1);
                }
            }
            case J_OBJECT -> {
                int n = in.varint();
                for (int i = 0; i < n; i++) {
                    in.skipString();
                    skipJson(in, depth + 1);
                }
            }
            default -> throw new ByteSource.Malformed("no JSON value tag " + tag);
        }
    }

    private void names(ByteSink out, List<String> l) {
        out.varint(l.size());
        for (String s : l) {
            name(out, s);
        }
    }

    /** A name (a type, an attribute's): its encoded bytes from the cache, or encoded once and kept. */
    private void name(ByteSink out, String s) {
        byte[] b = encodedNames.get(s);
        if (b == null) {
            scratch.clear();
            scratch.string(s);
            b = java.util.Arrays.copyOf(scratch.array(), scratch.position());
            if (encodedNames.size() < MAX_NAMES) {
                encodedNames.put(s, b);
            }
        }
        out.bytes(b, 0, b.length);
    }

    private void attributes(ByteSink out, Map<String, AttributeList> attrs) {
        out.varint(attrs.size());
        for (Map.Entry<String, AttributeList> a : attrs.entrySet()) {
            name(out, a.getKey());
            List<Attribute> instances = a.getValue().instances();
            out.varint(instances.size());
            for (Attribute i : instances) {
                attribute(out, i);
            }
        }
    }

    private void attribute(ByteSink out, Attribute a) {
        out.u8(kindCode(a.kind()));
        writeJson(out, a.value());
        out.nullableString(a.datasetId());
        out.nullableString(a.observedAt());
        out.nullableString(a.unitCode());
        nullableJson(out, a.valueType());
        nullableJson(out, a.objectType());
        attributes(out, a.sub());
        out.zigzag(a.createdAt());
        out.zigzag(a.modifiedAt());
    }

    private static void nullableJson(ByteSink out, JsonNode n) {
        if (n == null) {
            out.u8(0);
        } else {
            out.u8(1);
            writeJson(out, n);
        }
    }

    public static void writeJson(ByteSink out, JsonNode n) {
        switch (n.getNodeType()) {
            case NULL -> out.u8(J_NULL);
            case BOOLEAN -> out.u8(n.booleanValue() ? J_TRUE : J_FALSE);
            case STRING -> {
                out.u8(J_TEXT);
                out.string(n.textValue());
            }
            case NUMBER -> number(out, n);
            case ARRAY -> {
                out.u8(J_ARRAY);
                out.varint(n.size());
                for (JsonNode item : n) {
                    writeJson(out, item);
                }
            }
            case OBJECT -> {
                out.u8(J_OBJECT);
                out.varint(n.size());
                Iterator<Map.Entry<String, JsonNode>> it = n.fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> f = it.next();
                    out.string(f.getKey());
                    writeJson(out, f.getValue());
                }
            }
            default -> {
                out.u8(J_TEXT_JSON);
                try {
                    byte[] text = CorRestJson.mapper().writeValueAsBytes(n);
                    out.varint(text.length);
                    out.bytes(text, 0, text.length);
                } catch (JsonProcessingException e) {
                    throw new IllegalStateException("a JSON value that cannot be written: " + n.getNodeType(), e);
                }
            }
        }
    }

    private static void number(ByteSink out, JsonNode n) {
        switch (n.numberType()) {
            case INT -> {
                out.u8(n.isShort() ? J_SHORT : J_INT);
                out.zigzag(n.intValue());
            }
            case LONG -> {
                out.u8(J_LONG);
                out.zigzag(n.longValue());
            }
            case BIG_INTEGER -> {
                out.u8(J_BIG_INTEGER);
                out.string(n.bigIntegerValue().toString());
            }
            case FLOAT -> {
                out.u8(J_FLOAT);
                out.u32(Float.floatToRawIntBits(n.floatValue()));
            }
            case DOUBLE -> {
                out.u8(J_DOUBLE);
                out.u64(Double.doubleToRawLongBits(n.doubleValue()));
            }
            case BIG_DECIMAL -> {
                out.u8(J_DECIMAL);
                out.string(n.decimalValue().toString());
            }
        }
    }

    private static int kindCode(AttributeKind k) {
        return switch (k) {
            case PROPERTY -> 1;
            case RELATIONSHIP -> 2;
            case GEO_PROPERTY -> 3;
            case LANGUAGE_PROPERTY -> 4;
            case LIST_PROPERTY -> 5;
            case LIST_RELATIONSHIP -> 6;
            case VOCAB_PROPERTY -> 7;
            case JSON_PROPERTY -> 8;
        };
    }

    private static AttributeKind kind(int code) throws ByteSource.Malformed {
        return switch (code) {
            case 1 -> AttributeKind.PROPERTY;
            case 2 -> AttributeKind.RELATIONSHIP;
            case 3 -> AttributeKind.GEO_PROPERTY;
            case 4 -> AttributeKind.LANGUAGE_PROPERTY;
            case 5 -> AttributeKind.LIST_PROPERTY;
            case 6 -> AttributeKind.LIST_RELATIONSHIP;
            case 7 -> AttributeKind.VOCAB_PROPERTY;
            case 8 -> AttributeKind.JSON_PROPERTY;
            default -> throw new ByteSource.Malformed("no attribute kind " + code);
        };
    }

    // ---------------------------------------------------------------- reading

    public Entity readEntity(ByteSource in) throws ByteSource.Malformed {
        String id = in.string();
        List<String> types = names(in);
        List<String> scopes = names(in);
        long createdAt = in.zigzag();
        long modifiedAt = in.zigzag();
        Map<String, AttributeList> attrs = attributes(in, 0);
        try {
            return new Entity(id, types, scopes, attrs, createdAt, modifiedAt);
        } catch (RuntimeException e) {
            throw new ByteSource.Malformed("not an entity: " + e.getMessage());
        }
    }

    private List<String> names(ByteSource in) throws ByteSource.Malformed {
        int n = in.varint();
        if (n == 0) {
            return List.of();
        }
        List<String> l = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
            l.add(name(in.string()));
        }
        return l;
    }

    /** The shared instance of a repeated name. */
    public String name(String s) {
        String shared = names.get(s);
        if (shared != null) {
            return shared;
        }
        if (names.size() < MAX_NAMES) {
            names.put(s, s);
        }
        return s;
    }

    private Map<String, AttributeList> attributes(ByteSource in, int depth) throws ByteSource.Malformed {
        int n = in.varint();
        if (n == 0) {
            return Map.of();
        }
        if (depth > MAX_DEPTH) {
            throw new ByteSource.Malformed("sub-attributes nested deeper than " + MAX_DEPTH);
        }
        Map<String, AttributeList> attrs = new LinkedHashMap<>(Math.min(n, 1024) * 4 / 3 + 1);
        for (int i = 0; i < n; i++) {
            String name = name(in.string());
            int count = in.varint();
            if (count == 0) {
                throw new ByteSource.Malformed("attribute " + name + " has no instance");
            }
            if (count == 1) {
                attrs.put(name, AttributeList.of(attribute(in, depth)));
            } else {
                List<Attribute> instances = new ArrayList<>(Math.min(count, 1024));
                for (int j = 0; j < count; j++) {
                    instances.add(attribute(in, depth));
                }
                attrs.put(name, AttributeList.of(instances));
            }
        }
        return Collections.unmodifiableMap(attrs);
    }

    private Attribute attribute(ByteSource in, int depth) throws ByteSource.Malformed {
        AttributeKind kind = kind(in.u8());
        JsonNode value = readJson(in, 0);
        String datasetId = in.nullableString();
        String observedAt = in.nullableString();
        String unitCode = in.nullableString();
        if (unitCode != null) {
            unitCode = name(unitCode);
        }
        JsonNode valueType = nullableJson(in);
        JsonNode objectType = nullableJson(in);
        Map<String, AttributeList> sub = attributes(in, depth + 1);
        long createdAt = in.zigzag();
        long modifiedAt = in.zigzag();
        return new Attribute(kind, value, datasetId, observedAt, unitCode, valueType, objectType, sub, createdAt,
                modifiedAt);
    }

    private JsonNode nullableJson(ByteSource in) throws ByteSource.Malformed {
        return switch (in.u8()) {
            case 0 -> null;
            case 1 -> readJson(in, 0);
            default -> throw new ByteSource.Malformed("a nullable value's flag is neither 0 nor 1");
        };
    }

    public JsonNode readJson(ByteSource in, int depth) throws ByteSource.Malformed {
        if (depth > MAX_DEPTH) {
            throw new ByteSource.Malformed("a JSON value nested deeper than " + MAX_DEPTH);
        }
        int tag = in.u8();
        switch (tag) {
            case J_NULL:
                return NODES.nullNode();
            case J_FALSE:
                return NODES.booleanNode(false);
            case J_TRUE:
                return NODES.booleanNode(true);
            case J_INT:
                return NODES.numberNode(intValue(in.zigzag()));
            case J_SHORT:
                return NODES.numberNode((short) intValue(in.zigzag()));
            case J_LONG:
                return NODES.numberNode(in.zigzag());
            case J_DOUBLE:
                return NODES.numberNode(Double.longBitsToDouble(in.u64()));
            case J_FLOAT:
                return NODES.numberNode(Float.intBitsToFloat(in.u32()));
            case J_TEXT:
                return NODES.textNode(in.string());
            case J_BIG_INTEGER:
                try {
                    return NODES.numberNode(new BigInteger(in.string()));
                } catch (NumberFormatException e) {
                    throw new ByteSource.Malformed("a big integer that is not a number");
                }
            case J_DECIMAL:
                try {
                    return NODES.numberNode(new BigDecimal(in.string()));
                } catch (NumberFormatException e) {
                    throw new ByteSource.Malformed("a decimal that is not a number");
                }
            case J_ARRAY: {
                int n = in.varint();
                ArrayNode a = NODES.arrayNode(Math.min(n, 1024));
                for (int i = 0; i < n; i++) {
                    a.add(readJson(in, depth + 1));
                }
                return a;
            }
            case J_OBJECT: {
                int n = in.varint();
                ObjectNode o = NODES.objectNode();
                for (int i = 0; i < n; i++) {
                    String field = name(in.string());
                    o.set(field, readJson(in, depth + 1));
                }
                return o;
            }
            case J_TEXT_JSON: {
                byte[] text = in.bytes(in.varint());
                try {
                    return CorRestJson.mapper().readTree(text);
                } catch (java.io.IOException e) {
                    throw new ByteSource.Malformed("a JSON text that does not parse: " + e.getMessage());
                }
            }
            default:
                throw new ByteSource.Malformed("no JSON value tag " + tag);
        }
    }

    private static int intValue(long v) throws ByteSource.Malformed {
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new ByteSource.Malformed("an int value out of range: " + v);
        }
        return (int) v;
    }
}
