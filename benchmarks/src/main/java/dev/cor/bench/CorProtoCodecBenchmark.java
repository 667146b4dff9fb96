package dev.cor.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.proto.CorProtoCodec;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A {@code cor://} REQUEST carrying a 20-attribute NGSI-LD entity (expanded attribute names,
 * each a {@code type} and a {@code value}), encoded by one side and decoded by the other, in the
 * steady state of one connection - every name already in the tables (doc/cor-protocol.md § 6.4)
 * - against the same body as JSON text, serialized and parsed by Jackson. The {@code cor://}
 * side does the whole frame (method, path, a header, the tree into a {@code CorRest}); the text
 * side only the body, so the comparison favours the text.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Thread)
public class CorProtoCodecBenchmark {
    private static final ObjectMapper JSON = CorRestJson.mapper();

    private ObjectNode entity;
    private CorRestHeaders headers;
    private CorProtoCodec sender;
    private CorProtoCodec receiver;
    private final ByteBuffer wire = ByteBuffer.allocate(64 << 10);
    private int stream = 1;

    /** The entity of the broker's benchmarks: 20 attributes under their expanded names. */
    static ObjectNode entity(ObjectMapper json, int attributes) {
        ObjectNode e = json.createObjectNode();
        e.put("id", "urn:ngsi-ld:Vehicle:B-123");
        e.put("type", "https://uri.etsi.org/ngsi-ld/default-context/Vehicle");
        for (int i = 0; i < attributes; i++) {
            ObjectNode a = e.putObject(String.format("https://uri.etsi.org/ngsi-ld/default-context/attr%02d", i));
            a.put("type", "Property");
            a.put("value", 20.5 + i);
        }
        return e;
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        entity = entity(JSON, 20);
        headers = new CorRestHeaders().add("Content-Type", "application/ld+json");
        sender = CorProtoCodec.open(CorProtoCodec.DEFAULT_MAX_FRAME, CorProtoCodec.DEFAULT_NAME_TABLE);
        receiver = CorProtoCodec.open(CorProtoCodec.DEFAULT_MAX_FRAME, CorProtoCodec.DEFAULT_NAME_TABLE);
        corProto(); // the first request puts the names in both tables: what follows is the steady state
    }

    @Benchmark
    public JsonNode corProto() throws IOException {
        int s = stream;
        stream = s == Integer.MAX_VALUE ? 1 : s + 1;
        sender.writeRequest(s, "POST", "/ngsi-ld/v1/entities", null, headers, entity, null);
        wire.clear();
        sender.drainTo(wire);
        wire.flip();
        receiver.receive(wire);
        if (receiver.nextFrame() != CorProtoCodec.REQUEST) {
            throw new IllegalStateException("not a whole REQUEST");
        }
        return receiver.readRequest().json();
    }

    @Benchmark
    public JsonNode jsonText() throws IOException {
        return JSON.readTree(JSON.writeValueAsBytes(entity));
    }
}
