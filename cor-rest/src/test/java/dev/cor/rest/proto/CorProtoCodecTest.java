package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static dev.cor.rest.proto.ProtoFixture.drain;
import static dev.cor.rest.proto.ProtoFixture.header;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.CorRestHeaders;
import org.junit.jupiter.api.Test;

/** The codec on its own: frames and trees in, the same out; every malformed input a typed violation. */
class CorProtoCodecTest {
    private static final int MAX = CorProtoCodec.DEFAULT_MAX_FRAME;

    static ObjectNode entity(int attributes, int value) {
        ObjectNode e = CorRestJson.mapper().createObjectNode();
        e.put("id", "urn:ngsi-ld:Vehicle:" + value);
        e.put("type", "https://uri.etsi.org/ngsi-ld/default-context/Vehicle");
        for (int i = 0; i < attributes; i++) {
            ObjectNode a = e.putObject(String.format("https://uri.etsi.org/ngsi-ld/default-context/attr%02d", i));
            a.put("type", "Property");
            a.put("value", value * 100 + i);
        }
        return e;
    }

    /** Every frame buffered in {@code c}, described so that two decodings can be compared. */
    private static List<String> decodeAll(CorProtoCodec c) throws CorProtoException {
        List<String> got = new ArrayList<>();
        int t;
        while ((t = c.nextFrame()) != CorProtoCodec.NEED_MORE) {
            got.add(describe(c, t));
        }
        return got;
    }

    private static String describe(CorProtoCodec c, int t) throws CorProtoException {
        return switch (t) {
            case CorProtoCodec.REQUEST -> {
                CorRest r = c.readRequest();
                yield "REQUEST " + c.stream() + " " + r + " " + r.headers().toString().replace('\n', '|')
                        + " json=" + r.json() + " body=" + new String(r.body(), StandardCharsets.UTF_8);
            }
            case CorProtoCodec.RESPONSE -> {
                CorProtoResponse r = c.readResponse();
                yield "RESPONSE " + c.stream() + " " + r.status() + " " + r.headers().toString().replace('\n', '|')
                        + (r.arrivedAsTree() ? " tree=" + r.json() : " body=" + new String(r.body(), StandardCharsets.UTF_8));
            }
            case CorProtoCodec.HELLO -> "HELLO " + c.readHello();
            case CorProtoCodec.HELLO_ACK -> "HELLO-ACK " + c.readHelloAck();
            case CorProtoCodec.ERROR -> "ERROR " + c.stream() + " " + c.readError();
            case CorProtoCodec.GOAWAY -> "GOAWAY " + c.readGoAway();
            case CorProtoCodec.PING, CorProtoCodec.PONG -> CorProtoCodec.typeName(t) + " " + c.readPing();
            default -> throw new AssertionError("type " + t);
        };
    }

    /** A mix of every frame type, encoded by one side; the bytes and what they decode to. */
    private static byte[] sampleFrames(List<String> expected) throws Exception {
        CorProtoCodec enc = CorProtoCodec.open(MAX, CorProtoCodec.DEFAULT_NAME_TABLE);
        enc.writeHello(MAX, 16, 4096, "broker-a", "s3cret");
        enc.writeHelloAck(MAX, 16, 4096, "broker-b");
        CorRestHeaders h = new CorRestHeaders().add("Content-Type", "application/ld+json").add("NGSILD-Tenant", "t1");
        enc.writeRequest(1, "POST", "/ngsi-ld/v1/entities", null, h, entity(3, 1), null);
        enc.writeRequest(3, "GET", "/ngsi-ld/v1/entities/urn:x", "type=Vehicle&limit=5", h, null, null);
        enc.writeRequest(5, "PROPFIND", "/odd", "", null, null, "plain bytes".getBytes(StandardCharsets.UTF_8));
        enc.writePing(CorProtoCodec.PING, 0x0102030405060708L);
        enc.writeResponse(3, 200, h, entity(3, 2), null);
        enc.writeResponse(1, 201, new CorRestHeaders().add("Location", "/x"), null, null);
        enc.writeResponse(5, 200, null, null, "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
        enc.writeError(7, CorProtoError.REFUSED, "too many streams");
        enc.writePing(CorProtoCodec.PONG, -1L);
        enc.writeGoAway(5, CorProtoError.NO_ERROR, "stopping");
        byte[] bytes = drain(enc);
        CorProtoCodec dec = CorProtoCodec.open(MAX, CorProtoCodec.DEFAULT_NAME_TABLE);
        dec.receive(ByteBuffer.wrap(bytes));
        expected.addAll(decodeAll(dec));
        assertEquals(12, expected.size(), "every frame decodes whole: " + expected);
        assertEquals(0, dec.bufferedInput());
        return bytes;
    }

    // ---------------------------------------------------------------- round trips

    @Test
    void aRequestWithAnEntityTreeDecodesToTheSameRequestAndTree() throws Exception { // spec § 5.1, § 6.3
        CorProtoCodec a = CorProtoCodec.open(MAX, 4096);
        CorProtoCodec b = CorProtoCodec.open(MAX, 4096);
        ObjectNode body = entity(20, 7);
        CorRestHeaders h = new CorRestHeaders().add("Content-Type", "application/ld+json").add("Link", "<x>; rel=y");
        a.writeRequest(42, "PATCH", "/ngsi-ld/v1/entities/urn:ngsi-ld:Vehicle:7/attrs", "options=keyValues", h, body, null);
        b.receive(ByteBuffer.wrap(drain(a)));
        assertEquals(CorProtoCodec.REQUEST, b.nextFrame());
        assertEquals(42, b.stream());
        CorRest r = b.readRequest();
        assertEquals("PATCH", r.method());
        assertEquals("/ngsi-ld/v1/entities/urn:ngsi-ld:Vehicle:7/attrs", r.path());
        assertEquals("options=keyValues", r.query());
        assertEquals("keyValues", r.queryParam("options"));
        assertEquals("application/ld+json", r.headers().get("content-type"));
        assertEquals("<x>; rel=y", r.headers().get("Link"));
        assertTrue(r.isJson());
        assertEquals(body, r.json());
        assertEquals(0, r.body().length, "a tree is handed over as a tree, no text rebuilt (spec § 6.2)");
        assertEquals(CorProtoCodec.NEED_MORE, b.nextFrame());
    }

    @Test
    void everyJsonValueKindSurvivesTheTree() throws Exception { // spec § 6.3
        ObjectNode v = CorRestJson.mapper().createObjectNode();
        v.putNull("null");
        v.put("t", true).put("f", false);
        v.put("int", 7).put("negative", -123456).put("long", 1L << 40).put("minLong", Long.MIN_VALUE).put("maxInt", Integer.MAX_VALUE);
        v.put("double", 3.25).put("negZero", -0.0).put("tiny", Double.MIN_VALUE);
        v.put("big", new BigInteger("123456789012345678901234567890")).put("negBig", new BigInteger("-98765432109876543210"));
        v.put("dec", new BigDecimal("1234.5678900")).put("negDec", new BigDecimal("-1E+30"));
        v.put("text", "plain").put("empty", "").put("unicode", "grüße — 温度 🌡️").put("escapes", "\"\\\n\t\u0000");
        v.putArray("array").add(1).add("two").addNull().addArray().add(CorRestJson.mapper().createObjectNode());
        v.putObject("nested").putObject("deeper").putArray("deepest").add(false);
        v.putObject("emptyObject");
        v.put("binary", new byte[] {1, 2, 3});
        CorProtoCodec a = CorProtoCodec.open(MAX, 4096);
        CorProtoCodec b = CorProtoCodec.open(MAX, 4096);
        a.writeResponse(9, 200, null, v, null);
        b.receive(ByteBuffer.wrap(drain(a)));
        assertEquals(CorProtoCodec.RESPONSE, b.nextFrame());
        JsonNode got = b.readResponse().json();
        ObjectNode expected = v.deepCopy();
        expected.put("binary", "AQID"); // JSON has no binary: its base64 text (spec § 6.5)
        assertEquals(expected, got);
        assertEquals(CorRestJson.mapper().readTree(CorRestJson.mapper().writeValueAsBytes(v)).get("long"), got.get("long"),
                "an integer decodes as a JSON parser would read it");
        assertTrue(got.get("int").isInt());
        assertTrue(got.get("long").isLong());
    }

    @Test
    void aResponseOfBytesKeepsItsBytesAndParsesThemOnlyWhenAsked() throws Exception { // spec § 6.2
        CorProtoCodec a = CorProtoCodec.open(MAX, 16);
        CorProtoCodec b = CorProtoCodec.open(MAX, 16);
        byte[] text = "{\"id\":\"urn:a\",\"n\":[1,2]}".getBytes(StandardCharsets.UTF_8);
        a.writeResponse(1, 200, new CorRestHeaders().add("Content-Type", "application/json"), null, text);
        a.writeResponse(3, 204, null, null, new byte[0]);
        b.receive(ByteBuffer.wrap(drain(a)));
        assertEquals(CorProtoCodec.RESPONSE, b.nextFrame());
        CorProtoResponse r = b.readResponse();
        assertArrayEquals(text, r.body());
        assertTrue(!r.arrivedAsTree());
        assertEquals(CorRestJson.mapper().readTree(text), r.json());
        assertEquals(CorProtoCodec.RESPONSE, b.nextFrame());
        CorProtoResponse empty = b.readResponse();
        assertEquals(204, empty.status());
        assertEquals(0, empty.body().length);
        assertNull(empty.json());
    }

    // ---------------------------------------------------------------- reassembly

    @Test
    void framesSplitAtEveryByteBoundaryDecodeTheSameAsWhole() throws Exception { // spec § 3.6
        List<String> expected = new ArrayList<>();
        byte[] bytes = sampleFrames(expected);
        for (int cut = 0; cut <= bytes.length; cut++) {
            CorProtoCodec dec = CorProtoCodec.open(MAX, CorProtoCodec.DEFAULT_NAME_TABLE);
            dec.receive(ByteBuffer.wrap(bytes, 0, cut));
            List<String> got = new ArrayList<>(decodeAll(dec));
            dec.receive(ByteBuffer.wrap(bytes, cut, bytes.length - cut));
            got.addAll(decodeAll(dec));
            assertEquals(expected, got, "cut at byte " + cut);
            assertEquals(0, dec.bufferedInput());
        }
    }

    @Test
    void framesFedOneByteAtATimeDecodeOnlyWhenWhole() throws Exception { // spec § 3.6
        List<String> expected = new ArrayList<>();
        byte[] bytes = sampleFrames(expected);
        CorProtoCodec dec = CorProtoCodec.open(MAX, CorProtoCodec.DEFAULT_NAME_TABLE);
        List<String> got = new ArrayList<>();
        int needMore = 0;
        for (byte x : bytes) {
            dec.receive(ByteBuffer.wrap(new byte[] {x}));
            int t;
            while ((t = dec.nextFrame()) != CorProtoCodec.NEED_MORE) {
                got.add(describe(dec, t));
            }
            needMore++;
        }
        assertEquals(expected, got);
        assertEquals(bytes.length, needMore);
    }

    @Test
    void aTruncatedPayloadIsInvalidNotAnArrayError() throws Exception { // spec § 8.3
        List<String> ignored = new ArrayList<>();
        CorProtoCodec enc = CorProtoCodec.open(MAX, 4096);
        enc.writeRequest(1, "POST", "/p", "q", new CorRestHeaders().add("A", "b"), entity(2, 1), null);
        byte[] frame = drain(enc);
        int payload = frame.length - CorProtoCodec.HEADER_BYTES;
        // Every shorter length in the header: a whole frame whose payload ends too soon.
        for (int len = 0; len < payload; len++) {
            byte[] cut = Arrays.copyOf(frame, CorProtoCodec.HEADER_BYTES + len);
            ByteBuffer.wrap(cut).putInt(0, len);
            CorProtoCodec dec = CorProtoCodec.open(MAX, 4096);
            dec.receive(ByteBuffer.wrap(cut));
            assertEquals(CorProtoCodec.REQUEST, dec.nextFrame());
            CorProtoException e = assertThrows(CorProtoException.class, dec::readRequest, "payload cut to " + len);
            assertEquals(CorProtoError.INVALID_PAYLOAD, e.code());
            assertEquals(CorProtoException.Kind.PROTOCOL, e.kind());
        }
        // And bytes left over after the body.
        byte[] longer = Arrays.copyOf(frame, frame.length + 1);
        ByteBuffer.wrap(longer).putInt(0, payload + 1);
        CorProtoCodec dec = CorProtoCodec.open(MAX, 4096);
        dec.receive(ByteBuffer.wrap(longer));
        dec.nextFrame();
        assertEquals(CorProtoError.INVALID_PAYLOAD, assertThrows(CorProtoException.class, dec::readRequest).code());
        assertTrue(ignored.isEmpty());
    }

    // ---------------------------------------------------------------- the header

    @Test
    void anOversizedFrameIsRefusedFromItsHeaderAloneBeforeAnyPayload() { // spec § 3.5
        CorProtoCodec dec = CorProtoCodec.open(CorProtoCodec.MIN_MAX_FRAME, 16);
        dec.receive(ByteBuffer.wrap(header(CorProtoCodec.MIN_MAX_FRAME + 1L, CorProtoCodec.REQUEST, 0, 1)));
        CorProtoException e = assertThrows(CorProtoException.class, dec::nextFrame);
        assertEquals(CorProtoError.FRAME_TOO_LARGE, e.code());
        CorProtoCodec huge = CorProtoCodec.open(MAX, 16);
        huge.receive(ByteBuffer.wrap(header(0xFFFF_FFFFL, CorProtoCodec.REQUEST, 0, 1)));
        assertEquals(CorProtoError.FRAME_TOO_LARGE, assertThrows(CorProtoException.class, huge::nextFrame).code());
        // Before the handshake the limit is 1 KiB (spec § 3.5).
        CorProtoCodec fresh = new CorProtoCodec();
        fresh.receive(ByteBuffer.wrap(header(CorProtoCodec.HELLO_MAX_FRAME + 1L, CorProtoCodec.HELLO, 0, 0)));
        assertEquals(CorProtoError.FRAME_TOO_LARGE, assertThrows(CorProtoException.class, fresh::nextFrame).code());
    }

    @Test
    void anUnknownTypeAndAStreamFieldAgainstItsTypeAreViolations() { // spec § 3.2
        for (int t : new int[] {0, 10, 200, 255}) {
            CorProtoCodec dec = CorProtoCodec.open(MAX, 16);
            dec.receive(ByteBuffer.wrap(header(0, t, 0, 0)));
            assertEquals(CorProtoError.UNKNOWN_TYPE, assertThrows(CorProtoException.class, dec::nextFrame).code(), "type " + t);
        }
        int[][] wrong = {{CorProtoCodec.REQUEST, 0}, {CorProtoCodec.RESPONSE, 0}, {CorProtoCodec.ERROR, 0},
            {CorProtoCodec.HELLO, 1}, {CorProtoCodec.PING, 5}, {CorProtoCodec.GOAWAY, -1}, {CorProtoCodec.CANCEL, 0}};
        for (int[] w : wrong) {
            CorProtoCodec dec = CorProtoCodec.open(MAX, 16);
            dec.receive(ByteBuffer.wrap(header(0, w[0], 0, w[1])));
            assertEquals(CorProtoError.PROTOCOL_ERROR, assertThrows(CorProtoException.class, dec::nextFrame).code());
        }
    }

    @Test
    void aHelloOfAnotherVersionIsAVersionMismatchWhateverFollowsIt() throws Exception { // spec § 4.1
        byte[] payload = {0, 2, (byte) 0xFF};
        CorProtoCodec dec = new CorProtoCodec();
        dec.receive(ByteBuffer.wrap(header(payload.length, CorProtoCodec.HELLO, 0, 0)));
        dec.receive(ByteBuffer.wrap(payload));
        assertEquals(CorProtoCodec.HELLO, dec.nextFrame());
        assertEquals(CorProtoError.VERSION_MISMATCH, assertThrows(CorProtoException.class, dec::readHello).code());
    }

    @Test
    void randomGarbageIsEitherDecodedOrATypedViolationNeverACrash() throws Exception { // spec § 8.3
        Random rnd = new Random(20261002);
        CorProtoCodec enc = CorProtoCodec.open(MAX, 4096);
        enc.writeRequest(1, "POST", "/p", null, new CorRestHeaders().add("H", "v"), entity(4, 1), null);
        byte[] valid = drain(enc);
        int violations = 0;
        for (int i = 0; i < 3000; i++) {
            byte[] payload;
            if (i % 2 == 0) {
                payload = new byte[rnd.nextInt(64)];
                rnd.nextBytes(payload);
            } else { // a valid payload with a few bytes flipped: deeper into the tree
                payload = Arrays.copyOfRange(valid, CorProtoCodec.HEADER_BYTES, valid.length);
                for (int k = 0; k < 1 + rnd.nextInt(3); k++) {
                    payload[rnd.nextInt(payload.length)] = (byte) rnd.nextInt();
                }
            }
            int type = CorProtoCodec.HELLO + rnd.nextInt(8);
            int stream = type == CorProtoCodec.REQUEST || type == CorProtoCodec.RESPONSE || type == CorProtoCodec.ERROR ? 1 : 0;
            CorProtoCodec dec = CorProtoCodec.open(MAX, 4096);
            dec.receive(ByteBuffer.wrap(header(payload.length, type, rnd.nextInt(4), stream)));
            dec.receive(ByteBuffer.wrap(payload));
            try {
                int t = dec.nextFrame();
                assertEquals(type, t);
                describe(dec, t);
            } catch (CorProtoException e) {
                assertEquals(CorProtoException.Kind.PROTOCOL, e.kind());
                assertTrue(e.code() == CorProtoError.INVALID_PAYLOAD || e.code() == CorProtoError.VERSION_MISMATCH,
                        "code " + e.code() + ": " + e.getMessage());
                violations++;
            }
        }
        assertTrue(violations > 1000, "most garbage is refused: " + violations);
    }

    @Test
    void anOverlongVarintIsInvalid() throws Exception { // spec § 2.2
        byte[] payload = {1, 1, 0, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x01};
        // GET, path of 0 bytes would fail later; the query varint here never ends within 5 bytes.
        payload[1] = 1;
        payload[2] = '/';
        CorProtoCodec dec = CorProtoCodec.open(MAX, 16);
        dec.receive(ByteBuffer.wrap(header(payload.length, CorProtoCodec.REQUEST, 0, 1)));
        dec.receive(ByteBuffer.wrap(payload));
        dec.nextFrame();
        CorProtoException e = assertThrows(CorProtoException.class, dec::readRequest);
        assertEquals(CorProtoError.INVALID_PAYLOAD, e.code());
        assertTrue(e.getMessage().contains("varint"), e.getMessage());
    }

    @Test
    void aJsonTreeNestedTooDeepIsRefusedBothWays() throws Exception { // spec § 6.3
        JsonNode deep = CorRestJson.mapper().createArrayNode();
        ArrayNode inner = (ArrayNode) deep;
        for (int i = 0; i < JsonTree.MAX_DEPTH + 5; i++) {
            inner = inner.addArray();
        }
        CorProtoCodec enc = CorProtoCodec.open(MAX, 16);
        assertThrows(IllegalArgumentException.class, () -> enc.writeResponse(1, 200, null, deep, null));
        assertEquals(0, enc.pendingOutput(), "nothing half-written");
        byte[] payload = new byte[2 + 2 * (JsonTree.MAX_DEPTH + 5) + 1];
        payload[0] = 0;
        payload[1] = (byte) 200; // status 200
        payload[2] = 0; // no headers
        for (int i = 3; i < payload.length - 1; i += 2) {
            payload[i] = JsonTree.ARRAY;
            payload[i + 1] = 1;
        }
        CorProtoCodec dec = CorProtoCodec.open(MAX, 16);
        dec.receive(ByteBuffer.wrap(header(payload.length, CorProtoCodec.RESPONSE, CorProtoCodec.FLAG_BODY_TREE, 1)));
        dec.receive(ByteBuffer.wrap(payload));
        dec.nextFrame();
        CorProtoException e = assertThrows(CorProtoException.class, dec::readResponse);
        assertTrue(e.getMessage().contains("deeper"), e.getMessage());
    }

    // ---------------------------------------------------------------- names

    @Test
    void theSecondBodyWithTheSameNamesIsAFractionOfTheFirst() throws Exception { // spec § 6.1, § 6.4
        CorProtoCodec a = CorProtoCodec.open(MAX, 4096);
        CorProtoCodec b = CorProtoCodec.open(MAX, 4096);
        a.writeRequest(1, "POST", "/e", null, null, entity(20, 1), null);
        int first = a.pendingOutput();
        b.receive(ByteBuffer.wrap(drain(a)));
        a.writeRequest(3, "POST", "/e", null, null, entity(20, 2), null);
        int second = a.pendingOutput();
        b.receive(ByteBuffer.wrap(drain(a)));
        assertTrue(second * 3 < first, "first " + first + " bytes, second " + second);
        assertEquals(CorProtoCodec.REQUEST, b.nextFrame());
        assertEquals(entity(20, 1), b.readRequest().json());
        assertEquals(CorProtoCodec.REQUEST, b.nextFrame());
        assertEquals(entity(20, 2), b.readRequest().json());
    }

    @Test
    void aFullNameTableSendsLiteralsAndBothSidesStayInStep() throws Exception { // spec § 6.4
        CorProtoCodec a = CorProtoCodec.open(MAX, 3);
        CorProtoCodec b = CorProtoCodec.open(MAX, 3);
        for (int round = 0; round < 3; round++) {
            ObjectNode o = CorRestJson.mapper().createObjectNode();
            for (int i = 0; i < 6; i++) {
                o.put("name" + i, round);
            }
            o.put("x".repeat(NameTable.MAX_TABLE_NAME_BYTES + 1), "a literal, too long for any table");
            a.writeResponse(1, 200, null, o, null);
            b.receive(ByteBuffer.wrap(drain(a)));
            assertEquals(CorProtoCodec.RESPONSE, b.nextFrame());
            assertEquals(o, b.readResponse().json());
        }
    }

    @Test
    void aReceiverRefusesANameItHasNotBeenSentAndANewNameIntoAFullTable() throws Exception { // spec § 6.4
        // status 200, no headers, tree: an object of one key given by number 0 (v = 2), value null.
        byte[] unknownRef = {0, (byte) 200, 0, JsonTree.OBJECT, 1, 2, JsonTree.NULL};
        // the same with a new name (v = 0, "a") into a table of size 0
        byte[] intoFull = {0, (byte) 200, 0, JsonTree.OBJECT, 1, 0, 1, 'a', JsonTree.NULL};
        for (byte[] payload : List.of(unknownRef, intoFull)) {
            CorProtoCodec dec = CorProtoCodec.open(MAX, 0);
            dec.receive(ByteBuffer.wrap(header(payload.length, CorProtoCodec.RESPONSE, CorProtoCodec.FLAG_BODY_TREE, 1)));
            dec.receive(ByteBuffer.wrap(payload));
            dec.nextFrame();
            assertEquals(CorProtoError.INVALID_PAYLOAD, assertThrows(CorProtoException.class, dec::readResponse).code());
        }
    }

    @Test
    void aFrameTooLargeToSendLeavesNothingBehindAndTheTablesInStep() throws Exception { // spec § 3.5, § 6.4
        CorProtoCodec a = CorProtoCodec.open(CorProtoCodec.MIN_MAX_FRAME, 4096);
        CorProtoCodec b = CorProtoCodec.open(CorProtoCodec.MIN_MAX_FRAME, 4096);
        a.writeRequest(1, "GET", "/warm", null, new CorRestHeaders().add("Accept", "x"), null, null);
        ObjectNode big = entity(200, 1); // its names would enter the table, then the frame overflows
        CorProtoException e = assertThrows(CorProtoException.class, () -> a.writeRequest(3, "POST", "/big", null, null, big, null));
        assertEquals(CorProtoException.Kind.TOO_LARGE, e.kind());
        a.writeRequest(5, "POST", "/small", null, null, entity(2, 9), null);
        b.receive(ByteBuffer.wrap(drain(a)));
        assertEquals(CorProtoCodec.REQUEST, b.nextFrame());
        assertEquals("/warm", b.readRequest().path());
        assertEquals(CorProtoCodec.REQUEST, b.nextFrame());
        assertEquals(5, b.stream());
        assertEquals(entity(2, 9), b.readRequest().json());
        assertEquals(CorProtoCodec.NEED_MORE, b.nextFrame());
    }

    @Test
    void theBuffersAreReusedOnceGrown() throws Exception {
        // Measured in bytes this thread allocates (exact, per thread): a codec that allocated a
        // new buffer for every large frame would allocate at least the frame each time.
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        assertTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled());
        CorProtoCodec a = CorProtoCodec.open(MAX, 4096);
        CorProtoCodec b = CorProtoCodec.open(MAX, 4096);
        byte[] body = new byte[256 << 10];
        ByteBuffer wire = ByteBuffer.allocate(body.length + 64);
        int frames = 64;
        for (int i = 0; i < frames; i++) { // the buffers grow to the frame, and the code warms up
            a.writeResponse(1, 200, null, null, body);
            wire.clear();
            a.drainTo(wire);
            b.receive(wire.flip());
            assertEquals(CorProtoCodec.RESPONSE, b.nextFrame());
            b.readResponse();
        }
        long encoding = 0;
        long decoding = 0;
        for (int i = 0; i < frames; i++) {
            long t0 = mx.getCurrentThreadAllocatedBytes();
            a.writeResponse(1, 200, null, null, body);
            wire.clear();
            a.drainTo(wire);
            long t1 = mx.getCurrentThreadAllocatedBytes();
            b.receive(wire.flip());
            assertEquals(CorProtoCodec.RESPONSE, b.nextFrame());
            assertEquals(body.length, b.readResponse().body().length);
            long t2 = mx.getCurrentThreadAllocatedBytes();
            encoding += t1 - t0;
            decoding += t2 - t1;
        }
        assertTrue(encoding < frames * 1024L, "encoding a " + body.length + "-byte frame allocated " + encoding / frames + " bytes");
        // Decoding copies the body out (the response's own array), and nothing near a frame more.
        assertTrue(decoding < frames * (body.length + 16 * 1024L),
                "decoding a " + body.length + "-byte frame allocated " + decoding / frames + " bytes");
        assertEquals(0, a.pendingOutput());
        assertEquals(0, b.bufferedInput());
    }
}
