package dev.cor.rest.proto;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.TextNode;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestJson;

/**
 * The binary JSON tree (spec § 6.3): a Jackson tree written straight into the frame and read
 * straight back into one, object keys through the connection's name table. Recursive, bounded by
 * {@link #MAX_DEPTH}. Stateless; the tables and buffers it is handed belong to one thread.
 */
final class JsonTree {
    static final int NULL = 0;
    static final int FALSE = 1;
    static final int TRUE = 2;
    static final int INT = 3;
    static final int DOUBLE = 4;
    static final int STRING = 5;
    static final int ARRAY = 6;
    static final int OBJECT = 7;
    static final int BIG_INTEGER = 8;
    static final int BIG_DECIMAL = 9;

    /** The deepest nesting read or written (spec § 2.4). */
    static final int MAX_DEPTH = 512;

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private JsonTree() {
    }

    // ---------------------------------------------------------------- writing

    static void write(JsonNode node, ProtoOut out, NameTable.Out names) {
        write(node, out, names, 0);
    }

    private static void write(JsonNode node, ProtoOut out, NameTable.Out names, int depth) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("a JSON tree nested deeper than " + MAX_DEPTH);
        }
        switch (node.getNodeType()) {
            case OBJECT -> {
                out.putByte(OBJECT);
                out.putVarint(node.size());
                for (Map.Entry<String, JsonNode> e : node.properties()) {
                    names.write(out, e.getKey());
                    write(e.getValue(), out, names, depth + 1);
                }
            }
            case ARRAY -> {
                out.putByte(ARRAY);
                int n = node.size();
                out.putVarint(n);
                for (int i = 0; i < n; i++) {
                    write(node.get(i), out, names, depth + 1);
                }
            }
            case STRING -> {
                out.putByte(STRING);
                out.putString(node.textValue());
            }
            case NUMBER -> writeNumber(node, out);
            case BOOLEAN -> out.putByte(node.booleanValue() ? TRUE : FALSE);
            case NULL, MISSING -> out.putByte(NULL);
            // JSON has no binary: it travels as the base64 text JSON would carry (spec § 6.5).
            case BINARY -> {
                out.putByte(STRING);
                out.putString(node.asText());
            }
            case POJO -> write(CorRestJson.mapper().valueToTree(((com.fasterxml.jackson.databind.node.POJONode) node).getPojo()),
                    out, names, depth);
        }
    }

    private static void writeNumber(JsonNode node, ProtoOut out) {
        if (node.isIntegralNumber()) {
            if (node.canConvertToLong()) {
                long v = node.longValue();
                out.putByte(INT);
                out.putVarlong((v << 1) ^ (v >> 63));
            } else {
                out.putByte(BIG_INTEGER);
                byte[] b = node.bigIntegerValue().toByteArray();
                out.putVarint(b.length);
                out.putBytes(b, 0, b.length);
            }
        } else if (node.isBigDecimal()) {
            BigDecimal d = node.decimalValue();
            out.putByte(BIG_DECIMAL);
            long scale = d.scale();
            out.putVarlong((scale << 1) ^ (scale >> 63));
            byte[] b = d.unscaledValue().toByteArray();
            out.putVarint(b.length);
            out.putBytes(b, 0, b.length);
        } else {
            out.putByte(DOUBLE);
            out.putLong(Double.doubleToRawLongBits(node.doubleValue()));
        }
    }

    // ---------------------------------------------------------------- reading

    static JsonNode read(ProtoIn in, NameTable.In names) throws CorProtoException {
        return read(in, names, 0);
    }

    private static JsonNode read(ProtoIn in, NameTable.In names, int depth) throws CorProtoException {
        if (depth > MAX_DEPTH) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "a JSON tree nested deeper than " + MAX_DEPTH);
        }
        int tag = in.u8("value tag");
        switch (tag) {
            case NULL:
                return NullNode.instance;
            case FALSE:
                return BooleanNode.FALSE;
            case TRUE:
                return BooleanNode.TRUE;
            case INT: {
                long z = in.varlong("integer");
                long v = (z >>> 1) ^ -(z & 1);
                return v == (int) v ? IntNode.valueOf((int) v) : LongNode.valueOf(v);
            }
            case DOUBLE:
                return DoubleNode.valueOf(Double.longBitsToDouble(in.u64("double")));
            case STRING:
                return TextNode.valueOf(in.string(Integer.MAX_VALUE, "string"));
            case ARRAY: {
                int n = in.count("array count");
                ArrayNode a = NODES.arrayNode(n);
                for (int i = 0; i < n; i++) {
                    a.add(read(in, names, depth + 1));
                }
                return a;
            }
            case OBJECT: {
                int n = in.count("object count");
                ObjectNode o = NODES.objectNode();
                for (int i = 0; i < n; i++) {
                    String key = names.read(in);
                    o.set(key, read(in, names, depth + 1));
                }
                return o;
            }
            case BIG_INTEGER:
                return BigIntegerNode.valueOf(readBigInteger(in, "big integer"));
            case BIG_DECIMAL: {
                long z = in.varlong("big decimal scale");
                long scale = (z >>> 1) ^ -(z & 1);
                if (scale != (int) scale) {
                    throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "big decimal scale out of range: " + scale);
                }
                return DecimalNode.valueOf(new BigDecimal(readBigInteger(in, "big decimal"), (int) scale));
            }
            default:
                throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, "unknown value tag " + tag);
        }
    }

    private static BigInteger readBigInteger(ProtoIn in, String what) throws CorProtoException {
        int n = in.count(what + " length");
        if (n == 0) {
            throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD, what + " of no bytes");
        }
        return new BigInteger(in.bytes(n, what));
    }
}
