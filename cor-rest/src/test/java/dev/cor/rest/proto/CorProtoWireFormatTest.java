package dev.cor.rest.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.CorRestJson;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The bytes on the wire pinned to doc/cor-protocol.md: every reference frame below is written by
 * hand, byte by byte, from the spec's tables - the numbers are the spec's, never the codec's
 * constants - then decoded by the codec and compared, and the codec's own encoding of the same
 * values compared with it. A codec that swaps two tags, two types or two codes decodes and
 * encodes consistently with itself, and only a test like this one sees it.
 */
class CorProtoWireFormatTest {
    private static final int MAX = 1 << 20;

    private final ProtoFixture fx = new ProtoFixture();

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
    }

    /** Bytes from hex pairs, spaces and '|' (field separators) ignored. */
    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s.replace(" ", "").replace("|", ""));
    }

    private static byte[] cat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }

    /** A frame per spec § 3.1: u32 length of the payload, u8 type, u8 flags, u32 stream, payload. */
    private static byte[] frame(int type, int flags, int stream, byte[] payload) {
        return ByteBuffer.allocate(10 + payload.length).putInt(payload.length).put((byte) type).put((byte) flags)
                .putInt(stream).put(payload).array();
    }

    /** A codec past the handshake that has received {@code bytes}, stepped to their first frame. */
    private static CorProtoCodec receiving(byte[] bytes, int expectedType) throws CorProtoException {
        return receiving(bytes, expectedType, CorProtoCodec.open(MAX, 4096));
    }

    private static CorProtoCodec receiving(byte[] bytes, int expectedType, CorProtoCodec dec) throws CorProtoException {
        dec.receive(ByteBuffer.wrap(bytes));
        assertEquals(expectedType, dec.nextFrame(), "the frame type (spec § 3.2)");
        return dec;
    }

    private static void assertWire(byte[] expected, CorProtoCodec enc) {
        byte[] got = ProtoFixture.drain(enc);
        assertEquals(HexFormat.ofDelimiter(" ").formatHex(expected), HexFormat.ofDelimiter(" ").formatHex(got),
                "the codec's bytes against the spec's");
    }

    // ---------------------------------------------------------------- frames

    @Test
    void helloIsVersionMaxFrameMaxStreamsNameTableNameAndToken() throws Exception { // spec § 4.1
        byte[] wire = frame(1, 0, 0, hex("0001 | 00100000 | 0100 | 1000 | 05 62726f6b61 | 02 746b"));
        assertArrayEquals(hex("00000013 01 00 00000000"), java.util.Arrays.copyOf(wire, 10), "the header, by hand");
        CorProtoCodec.Hello h = receiving(wire, 1, new CorProtoCodec()).readHello();
        assertEquals(new CorProtoCodec.Hello(1, 1 << 20, 256, 4096, "broka", "tk"), h);

        CorProtoCodec enc = new CorProtoCodec();
        enc.writeHello(1 << 20, 256, 4096, "broka", "tk");
        assertWire(wire, enc);
        // No token travels as an empty string.
        enc.writeHello(4096, 1, 0, "", null);
        assertWire(frame(1, 0, 0, hex("0001 | 00001000 | 0001 | 0000 | 00 | 00")), enc);
    }

    @Test
    void helloAckIsVersionAndTheAgreedLimitsAndTheServersName() throws Exception { // spec § 4.2
        byte[] wire = frame(2, 0, 0, hex("0001 | 00008000 | 0010 | 0020 | 03 737276"));
        CorProtoCodec.Hello h = receiving(wire, 2, new CorProtoCodec()).readHelloAck();
        assertEquals(new CorProtoCodec.Hello(1, 32 << 10, 16, 32, "srv", ""), h);
        CorProtoCodec enc = new CorProtoCodec();
        enc.writeHelloAck(32 << 10, 16, 32, "srv");
        assertWire(wire, enc);
    }

    @Test
    void aRequestIsMethodPathQueryHeadersAndBody() throws Exception { // spec § 5.1, § 3.4, § 6.4
        // GET (1), path "/e", query "a=1" (varint 3+1), one header: a new name "H" (0) and "v",
        // body as bytes (flag 0x02): varint 2 and "hi".
        byte[] wire = frame(3, 0x02, 5, hex("01 | 02 2f65 | 04 613d31 | 01 | 00 01 48 | 01 76 | 02 6869"));
        CorRest r = receiving(wire, 3).readRequest();
        assertEquals("GET", r.method());
        assertEquals("/e", r.path());
        assertEquals("a=1", r.query());
        assertEquals("v", r.headers().get("H"));
        assertEquals(1, r.headers().size());
        assertArrayEquals("hi".getBytes(StandardCharsets.US_ASCII), r.body());

        CorProtoCodec enc = CorProtoCodec.open(MAX, 4096);
        enc.writeRequest(5, "GET", "/e", "a=1", new CorRestHeaders().add("H", "v"), null, "hi".getBytes(StandardCharsets.US_ASCII));
        assertWire(wire, enc);
    }

    @Test
    void aMethodOutsideTheTableTravelsAsAStringAndNoQueryIsZeroAndAnEmptyOneIsOne() throws Exception { // spec § 5.1
        byte[] none = frame(3, 0, 1, hex("00 08 50524f5046494e44 | 01 2f | 00 | 00"));
        CorRest r = receiving(none, 3).readRequest();
        assertEquals("PROPFIND", r.method());
        assertEquals("/", r.path());
        assertNull(r.query());
        CorProtoCodec enc = CorProtoCodec.open(MAX, 4096);
        enc.writeRequest(1, "PROPFIND", "/", null, null, null, null);
        assertWire(none, enc);

        byte[] empty = frame(3, 0, 3, hex("05 | 01 2f | 01 | 00"));
        CorRest d = receiving(empty, 3).readRequest();
        assertEquals("DELETE", d.method());
        assertEquals("", d.query());
        enc.writeRequest(3, "DELETE", "/", "", null, null, null);
        assertWire(empty, enc);
    }

    @Test
    void everyMethodHasTheCodeOfTheSpecsTable() throws Exception { // spec § 5.1
        List<String> table = List.of("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"); // codes 1..7
        for (int code = 1; code <= 7; code++) {
            byte[] wire = frame(3, 0, 9, cat(new byte[] {(byte) code}, hex("01 2f | 00 | 00")));
            assertEquals(table.get(code - 1), receiving(wire, 3).readRequest().method(), "method code " + code);
            CorProtoCodec enc = CorProtoCodec.open(MAX, 16);
            enc.writeRequest(9, table.get(code - 1), "/", null, null, null, null);
            assertWire(wire, enc);
        }
    }

    @Test
    void aResponseIsStatusHeadersAndBody() throws Exception { // spec § 5.2
        // 201, one header "Location" (a new name) "/x", no body; then 200 with the same header
        // name by number (v = 2: entry 0) and a body of bytes.
        byte[] first = frame(4, 0, 7, hex("00c9 | 01 | 00 08 4c6f636174696f6e | 02 2f78"));
        byte[] second = frame(4, 0x02, 9, hex("00c8 | 01 | 02 | 02 2f79 | 03 616263"));
        CorProtoCodec dec = CorProtoCodec.open(MAX, 4096);
        CorProtoResponse a = receiving(first, 4, dec).readResponse();
        assertEquals(7, dec.stream());
        assertEquals(201, a.status());
        assertEquals("/x", a.headers().get("Location"));
        assertEquals(0, a.body().length);
        CorProtoResponse b = receiving(second, 4, dec).readResponse();
        assertEquals(9, dec.stream());
        assertEquals(200, b.status());
        assertEquals("/y", b.headers().get("Location"));
        assertArrayEquals("abc".getBytes(StandardCharsets.US_ASCII), b.body());

        CorProtoCodec enc = CorProtoCodec.open(MAX, 4096);
        enc.writeResponse(7, 201, new CorRestHeaders().add("Location", "/x"), null, null);
        enc.writeResponse(9, 200, new CorRestHeaders().add("Location", "/y"), null, "abc".getBytes(StandardCharsets.US_ASCII));
        assertWire(cat(first, second), enc);
    }

    @Test
    void anErrorIsACodeAndAMessageOnItsStream() throws Exception { // spec § 5.4, § 8.2
        byte[] wire = frame(5, 0, 7, hex("000a | 04 62757379"));
        CorProtoCodec dec = receiving(wire, 5);
        CorProtoCodec.Problem p = dec.readError();
        assertEquals(7, p.lastStream(), "an ERROR's problem carries its stream");
        assertEquals(CorProtoError.REFUSED, p.code());
        assertEquals("busy", p.reason());
        CorProtoCodec enc = CorProtoCodec.open(MAX, 16);
        enc.writeError(7, CorProtoError.REFUSED, "busy");
        assertWire(wire, enc);
    }

    @Test
    void pingAndPongCarryEightOpaqueBytesOnStreamZero() throws Exception { // spec § 7
        byte[] ping = frame(6, 0, 0, hex("0102030405060708"));
        byte[] pong = frame(7, 0, 0, hex("fffffffffffffffe"));
        assertEquals(0x0102030405060708L, receiving(ping, 6).readPing());
        assertEquals(-2L, receiving(pong, 7).readPing());
        CorProtoCodec enc = CorProtoCodec.open(MAX, 16);
        enc.writePing(6, 0x0102030405060708L);
        enc.writePing(7, -2L);
        assertWire(cat(ping, pong), enc);
    }

    @Test
    void aGoAwayIsTheLastStreamACodeAndAReason() throws Exception { // spec § 8.1
        byte[] wire = frame(8, 0, 0, hex("00000005 | 0000 | 03 627965"));
        CorProtoCodec.Problem p = receiving(wire, 8).readGoAway();
        assertEquals(new CorProtoCodec.Problem(5, CorProtoError.NO_ERROR, 0, "bye"), p);
        CorProtoCodec enc = CorProtoCodec.open(MAX, 16);
        enc.writeGoAway(5, CorProtoError.NO_ERROR, "bye");
        assertWire(wire, enc);
    }

    @Test
    void everyErrorCodeHasTheNumberOfTheSpecsTable() throws Exception { // spec § 8.2
        List<String> table = List.of("NO_ERROR", "PROTOCOL_ERROR", "UNKNOWN_TYPE", "VERSION_MISMATCH", "FRAME_TOO_LARGE",
                "INVALID_PAYLOAD", "STREAM_IN_USE", "UNAUTHORIZED", "HELLO_EXPECTED", "TIMEOUT", "REFUSED", "TOO_LARGE",
                "INTERNAL");
        assertEquals(table.size(), CorProtoError.values().length, "the spec names every code the codec has");
        for (int code = 0; code < table.size(); code++) {
            byte[] wire = frame(8, 0, 0, cat(hex("00000000"), new byte[] {0, (byte) code}, hex("00")));
            assertEquals(table.get(code), receiving(wire, 8).readGoAway().code().name(), "code " + code);
            CorProtoCodec enc = CorProtoCodec.open(MAX, 16);
            enc.writeGoAway(0, CorProtoError.valueOf(table.get(code)), "");
            assertWire(wire, enc);
        }
        // A code it does not know is PROTOCOL_ERROR, its number kept for the message.
        CorProtoCodec.Problem unknown = receiving(frame(8, 0, 0, hex("00000000 | 0063 | 00")), 8).readGoAway();
        assertEquals(CorProtoError.PROTOCOL_ERROR, unknown.code());
        assertEquals(99, unknown.rawCode());
    }

    // ---------------------------------------------------------------- the binary JSON tree

    /** A RESPONSE frame, 200, no headers, whose body is the tree value {@code value} (flag 0x01). */
    private static byte[] treeResponse(byte[] value) {
        return frame(4, 0x01, 1, cat(hex("00c8 | 00"), value));
    }

    private static void assertTree(JsonNode expected, String valueHex) throws Exception {
        assertTree(expected, hex(valueHex), 4096);
    }

    private static void assertTree(JsonNode expected, byte[] value, int nameTable) throws Exception {
        byte[] wire = treeResponse(value);
        CorProtoResponse r = receiving(wire, 4, CorProtoCodec.open(MAX, nameTable)).readResponse();
        assertTrue(r.arrivedAsTree());
        JsonNode got = r.json();
        assertEquals(expected, got, "decoded from " + HexFormat.of().formatHex(value));
        assertEquals(expected.getClass(), got.getClass(), "the node's kind");
        CorProtoCodec enc = CorProtoCodec.open(MAX, nameTable);
        enc.writeResponse(1, 200, null, expected, null);
        assertWire(wire, enc);
    }

    @Test
    void nullFalseAndTrueAreTagsZeroOneAndTwo() throws Exception { // spec § 6.3
        assertTree(CorRestJson.mapper().nullNode(), "00");
        assertTree(CorRestJson.mapper().getNodeFactory().booleanNode(false), "01");
        assertTree(CorRestJson.mapper().getNodeFactory().booleanNode(true), "02");
    }

    @Test
    void anIntegerIsTagThreeAndAZigzagVarlong() throws Exception { // spec § 6.3, § 2.2
        assertTree(IntNode.valueOf(0), "03 00");
        assertTree(IntNode.valueOf(-1), "03 01");
        assertTree(IntNode.valueOf(-3), "03 05");
        assertTree(IntNode.valueOf(300), "03 d804"); // zigzag 600 = 0x258: 0x58|0x80, 0x04
        assertTree(LongNode.valueOf(1L << 40), "03 808080808040"); // zigzag 2^41: five empty groups, then 0x40
        assertTree(LongNode.valueOf(Long.MIN_VALUE), "03 ffffffffffffffffff01"); // zigzag 2^64 - 1: ten bytes
    }

    @Test
    void aFloatingPointNumberIsTagFourAndEightBytesOfIeee754() throws Exception { // spec § 6.3
        assertTree(DoubleNode.valueOf(1.5), "04 3ff8000000000000");
        assertTree(DoubleNode.valueOf(-0.0), "04 8000000000000000");
    }

    @Test
    void aStringIsTagFiveAndAUtf8Str() throws Exception { // spec § 6.3, § 2.3
        assertTree(CorRestJson.mapper().getNodeFactory().textNode("hé"), "05 03 68c3a9");
        assertTree(CorRestJson.mapper().getNodeFactory().textNode(""), "05 00");
    }

    @Test
    void anArrayIsTagSixACountAndItsValues() throws Exception { // spec § 6.3
        ArrayNode a = CorRestJson.mapper().createArrayNode();
        a.add(true).addNull().addArray();
        assertTree(a, "06 03 | 02 | 00 | 06 00");
    }

    @Test
    void anObjectIsTagSevenACountAndNameValuePairsWithNamesThroughTheTable() throws Exception { // spec § 6.3, § 6.4
        // [{"k":1}, {"k":2, "j":"x"}]: "k" is new (0) the first time, then entry 0 (v = 2); "j" new.
        ArrayNode a = CorRestJson.mapper().createArrayNode();
        a.addObject().put("k", 1);
        a.addObject().put("k", 2).put("j", "x");
        assertTree(a, "06 02 | 07 01 | 00 01 6b | 03 02 | 07 02 | 02 | 03 04 | 00 01 6a | 05 01 78");
    }

    @Test
    void aNameIsALiteralOnceTheTableIsFull() throws Exception { // spec § 6.4
        ObjectNode o = CorRestJson.mapper().createObjectNode().put("k", 1);
        assertTree(o, hex("07 01 | 01 01 6b | 03 02"), 0);
    }

    @Test
    void aBigIntegerIsTagEightALengthAndTwosComplementBytes() throws Exception { // spec § 6.3
        assertTree(BigIntegerNode.valueOf(BigInteger.ONE.shiftLeft(64)), "08 09 010000000000000000");
        assertTree(BigIntegerNode.valueOf(BigInteger.ONE.shiftLeft(64).negate()), "08 09 ff0000000000000000");
    }

    @Test
    void aBigDecimalIsTagNineAZigzagScaleALengthAndTheUnscaledBytes() throws Exception { // spec § 6.3
        assertTree(DecimalNode.valueOf(new BigDecimal("1.25")), "09 04 01 7d"); // scale 2: zigzag 4; 125
        assertTree(DecimalNode.valueOf(new BigDecimal("-1.5E+3")), "09 03 01 f1"); // scale -2: zigzag 3; -15
    }

    // ---------------------------------------------------------------- a server, over a socket

    private static void assertNext(byte[] expected, DataInputStream in) throws Exception {
        byte[] got = new byte[expected.length];
        in.readFully(got);
        assertEquals(HexFormat.ofDelimiter(" ").formatHex(expected), HexFormat.ofDelimiter(" ").formatHex(got));
    }

    @Test
    void aServerAnswersTheSpecsHelloPingAndRequestWithTheSpecsBytes() throws Exception { // spec § 4, § 5, § 7, § 8
        CorProtoServer server = fx.server(r -> r.respond(204, null, null), b -> b.name("srv"), fx.loop("wire-server"));
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            DataInputStream in = new DataInputStream(s.getInputStream());
            // HELLO: version 1, 32 KiB frames, 16 streams, 32 names, name "c", no token.
            out.write(frame(1, 0, 0, hex("0001 | 00008000 | 0010 | 0020 | 01 63 | 00")));
            assertNext(frame(2, 0, 0, hex("0001 | 00008000 | 0010 | 0020 | 03 737276")), in);
            out.write(frame(6, 0, 0, hex("a1a2a3a4a5a6a7a8")));
            assertNext(frame(7, 0, 0, hex("a1a2a3a4a5a6a7a8")), in);
            // GET /x on stream 3: 204, no headers, no body.
            out.write(frame(3, 0, 3, hex("01 | 02 2f78 | 00 | 00")));
            assertNext(frame(4, 0, 3, hex("00cc | 00")), in);
            // A PONG nobody asked for is ignored; the connection goes on.
            out.write(frame(7, 0, 0, hex("0000000000000000")));
            out.write(frame(3, 0, 5, hex("01 | 02 2f79 | 00 | 00")));
            assertNext(frame(4, 0, 5, hex("00cc | 00")), in);
            server.stop();
            // GOAWAY: stream 0, the last stream accepted (5), NO_ERROR (0), a reason of the server's.
            ByteBuffer head = ByteBuffer.wrap(in.readNBytes(10));
            byte[] payload = in.readNBytes(head.getInt(0));
            assertArrayEquals(hex("08 00 00000000"), java.util.Arrays.copyOfRange(head.array(), 4, 10));
            assertArrayEquals(hex("00000005 | 0000"), java.util.Arrays.copyOf(payload, 6));
            assertEquals(payload.length - 7, payload[6], "the reason's length");
        }
    }
}
