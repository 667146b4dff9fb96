package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.cor.ngsild.KeepAliveHttp;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code ./cor} wrapper's run with an AOT cache, with a stale one and with none - the wrapper
 * itself, told not to build ({@code COR_NO_BUILD=1}: the jar is the one this build packaged) and
 * where the cache is ({@code COR_AOT_CACHE}). The cache is made the way {@code ./cor aot-train}
 * makes it ({@code -XX:AOTCacheOutput}, a SIGTERM, {@link AotCacheKey} beside it), with a few
 * requests instead of its workload: what is checked is that the broker - its coroutines, its
 * durable store - runs from the cache, not how fast.
 */
@Tag("process")
class AotCacheProcessTest {
    private final KeepAliveHttp http = new KeepAliveHttp();

    @TempDir
    Path tmp;

    private HttpResponse<String> send(ServerProcess s, String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(s.uri(path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        return http.sendString(b.build());
    }

    /** A create on the durable store (a coroutine: it waits for its fsync), a PATCH, a read of both. */
    private void writeAndRead(ServerProcess s, String id) throws Exception {
        HttpResponse<String> r = send(s, "POST", "/ngsi-ld/v1/entities",
                "{\"id\": \"" + id + "\", \"type\": \"T\", \"p\": {\"type\": \"Property\", \"value\": 1}}");
        assertEquals(201, r.statusCode(), r.body());
        r = send(s, "PATCH", "/ngsi-ld/v1/entities/" + id + "/attrs/p", "{\"type\": \"Property\", \"value\": 2}");
        assertEquals(204, r.statusCode(), r.body());
        r = send(s, "GET", "/ngsi-ld/v1/entities/" + id + "?options=keyValues", null);
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"p\":2"), r.body());
        PromText m = PromText.parse(send(s, "GET", "/metrics", null).body());
        assertTrue(m.value("cor_dispatch_total{mode=\"coroutine\"}") >= 2, "the writes ran as coroutines");
    }

    private static int sigterm(ServerProcess s) throws InterruptedException {
        s.process.destroy();
        assertTrue(s.process.waitFor(60, TimeUnit.SECONDS), "ended on SIGTERM: " + s);
        return s.process.exitValue();
    }

    private ServerProcess wrapperRun(Path aot, Path log, String dataDir) throws Exception {
        String wrapper = System.getProperty("cor.wrapper");
        assertTrue(wrapper != null && Files.isExecutable(Path.of(wrapper)), "cor.wrapper=" + wrapper);
        // which classes came from the cache: the JVM's class+load log (JAVA_TOOL_OPTIONS reaches the
        // JVM the wrapper execs without a change to the wrapper)
        return ServerProcess.start(List.of(wrapper, "run"), Map.of("COR_NO_BUILD", "1", "COR_AOT_CACHE", aot.toString(),
                "COR_JAVA_HOME", System.getProperty("java.home"),
                "JAVA_TOOL_OPTIONS", "-Xlog:class+load=info:file=" + log), tmp, "--dataDir", dataDir);
    }

    @Test
    void theWrapperRunsTheBrokerFromAFreshCacheRemovesAStaleOneAndRunsAsBeforeWithout() throws Exception {
        Path aot = tmp.resolve("cor-server.aot");
        // the training run: the broker with its JVM flags (the collector: a cache is only used by a
        // JVM that runs the one it was trained with) and -XX:AOTCacheOutput, a few requests, SIGTERM
        Path jvmOptions = Path.of(ServerProcess.jar()).toAbsolutePath().getParent().getParent().resolve("jvm.options");
        try (ServerProcess s = ServerProcess.start(List.of(ServerProcess.java(), "@" + jvmOptions, "-XX:AOTCacheOutput=" + aot,
                "-jar", ServerProcess.jar()), Map.of(), tmp, "--dataDir", "train")) {
            writeAndRead(s, "urn:ngsi-ld:T:train");
            assertEquals(0, sigterm(s), s.toString());
            assertTrue(Files.size(aot) > 1_000_000, "the JVM wrote the cache at its exit: " + s);
        }
        Files.writeString(tmp.resolve("cor-server.aot.key"), AotCacheKey.of(ServerProcess.jar()) + "\n");

        // a cache made for this jar: used, and the broker's own classes come from it
        Path log = tmp.resolve("with.log");
        try (ServerProcess s = wrapperRun(aot, log, "with")) {
            writeAndRead(s, "urn:ngsi-ld:T:with");
            assertTrue(s.stderr().contains("cor: with the AOT cache " + aot), s.toString());
            assertEquals(0, sigterm(s), s.toString());
        }
        String loaded = Files.readString(log);
        assertTrue(loaded.contains("dev.cor.base.CorCo source: shared objects file"), "the coroutines' class from the cache");
        assertTrue(loaded.contains("dev.cor.ngsild.store.durable.DurableEntityStore source: shared objects file"),
                "the durable store's class from the cache");

        // a key that is not this jar's (a rebuilt jar): the cache is removed, the broker runs without it
        Files.writeString(tmp.resolve("cor-server.aot.key"), "0123\n");
        log = tmp.resolve("stale.log");
        try (ServerProcess s = wrapperRun(aot, log, "stale")) {
            writeAndRead(s, "urn:ngsi-ld:T:stale");
            assertTrue(s.stderr().contains("was trained on another build of cor-server.jar"), s.toString());
            assertEquals(0, sigterm(s), s.toString());
        }
        assertFalse(Files.exists(aot), "the stale cache removed");
        assertFalse(Files.readString(log).contains("dev.cor.base.CorCo source: shared objects file"), "nothing from a stale cache");

        // none at all: as before, and not a word about a cache
        try (ServerProcess s = wrapperRun(aot, tmp.resolve("none.log"), "none")) {
            writeAndRead(s, "urn:ngsi-ld:T:none");
            assertFalse(s.stderr().contains("AOT cache"), s.toString());
            assertEquals(0, sigterm(s), s.toString());
        }
    }
}
