package dev.cor.ngsild.ld;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.rest.client.CorRestClient;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The broker's {@code @context} downloads as JFR events ({@code dev.cor.ContextDownload}), read
 * back from a recording: one per download - not per look-up - with its URL, size and outcome.
 */
class ContextDownloadEventTest {
    private static final String DOC = "{\"@context\": {\"speed\": \"https://example.org/speed\"}}";

    @TempDir
    Path dir;

    @Test
    void eachDownloadIsOneEventWithItsUrlSizeAndOutcome() throws Exception {
        List<RecordedEvent> events;
        String good;
        String missing;
        try (ContextServer server = new ContextServer(); CorRestClient client = CorRestClient.builder().build();
                Recording rec = new Recording()) {
            server.put("/good.jsonld", DOC);
            server.put("/missing.jsonld", new ContextServer.Reply(404, Map.of(), new byte[0], 0, false));
            good = server.url("/good.jsonld");
            missing = server.url("/missing.jsonld");
            LdContexts contexts = LdContexts.builder().client(client).timeoutMs(5_000).build();
            rec.enable("dev.cor.ContextDownload");
            rec.start();
            assertEquals("https://example.org/speed", contexts.resolve(ContextRef.link(good), 5_000).expand("speed"));
            contexts.resolve(ContextRef.link(good), 5_000); // cached: no second download
            assertThrows(NgsiLdException.class, () -> contexts.resolve(ContextRef.link(missing), 5_000));
            rec.stop();
            Path file = dir.resolve("ctx.jfr");
            rec.dump(file);
            events = RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals("dev.cor.ContextDownload")).toList();
        }
        assertEquals(2, events.size(), events.toString());
        RecordedEvent ok = events.stream().filter(e -> e.getString("url").equals(good)).findFirst().orElseThrow();
        assertEquals("ok", ok.getString("outcome"));
        assertEquals(DOC.length(), ok.getLong("bytes"));
        RecordedEvent failed = events.stream().filter(e -> e.getString("url").equals(missing)).findFirst().orElseThrow();
        assertTrue(failed.getString("outcome").contains("404"), failed.getString("outcome"));
    }
}
