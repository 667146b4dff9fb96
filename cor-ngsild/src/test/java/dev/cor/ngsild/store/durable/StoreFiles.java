package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.cor.ngsild.model.Attribute;
import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;

/** What the store's file tests share: small entities, where records begin, copies of a directory, the store's log. */
final class StoreFiles {
    static final String TYPE = "https://uri.etsi.org/ngsi-ld/default-context/T";
    static final String ATTR = "https://uri.etsi.org/ngsi-ld/default-context/v";

    private StoreFiles() {
    }

    static Entity entity(String id, int v) {
        Attribute a = new Attribute(AttributeKind.PROPERTY, JsonNodeFactory.instance.numberNode(v), null, null, null,
                null, null, Map.of(), 1_000, 2_000);
        return new Entity(id, List.of(TYPE), List.of(), Map.of(ATTR, AttributeList.of(a)), 1_000, 2_000);
    }

    static int value(Entity e) {
        return e.attributes().get(ATTR).instances().get(0).value().intValue();
    }

    /** Puts {@code entity} (whatever was there) and waits until it is durable, as a request does. */
    static void put(DurableEntityStore store, String tenant, Entity entity) {
        store.write(tenant, entity.id(), current -> entity);
        store.sync();
    }

    static List<Path> files(Path dir, String prefix) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().startsWith(prefix)).sorted().toList();
        }
    }

    /** Where each record of a journal segment (or snapshot) begins, and the end of the last one. */
    static List<Long> recordOffsets(Path file) throws IOException {
        List<Long> offsets = new ArrayList<>();
        try (DataFile f = DataFiles.system().open(file, DataFiles.Mode.READ)) {
            FrameReader r = new FrameReader(f, Format.HEADER_BYTES);
            while (true) {
                offsets.add(r.offset());
                int status = r.next();
                if (status == FrameReader.END) {
                    return offsets;
                }
                if (status != FrameReader.FRAME) {
                    throw new AssertionError(file + ": " + r.problem() + " at " + r.offset());
                }
            }
        }
    }

    static void copy(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path p : s.toList()) {
                Files.copy(p, to.resolve(p.getFileName()));
            }
        }
    }

    static void truncate(Path file, long size) throws IOException {
        try (var ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(size);
        }
    }

    static void flipBit(Path file, long offset, int bit) throws IOException {
        byte[] b = Files.readAllBytes(file);
        b[(int) offset] ^= (byte) (1 << bit);
        Files.write(file, b);
    }

    /** The WARNING and worse lines the store logs while {@code body} runs. */
    static List<String> warnings(ThrowingRunnable body) throws Exception {
        Logger logger = Logger.getLogger("dev.cor.ngsild.store.durable");
        List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    lines.add(r.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        logger.addHandler(h);
        try {
            body.run();
        } finally {
            logger.removeHandler(h);
        }
        return new ArrayList<>(lines);
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
