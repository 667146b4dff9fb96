package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The test client itself: what it writes, what it reads, when it reuses a connection and when it must not. */
class KeepAliveHttpTest {
    private final KeepAliveHttp http = new KeepAliveHttp();
    private ScriptedServer server;

    @AfterEach
    void close() throws IOException {
        http.close();
        if (server != null) {
            server.close();
        }
    }

    @Test
    void sequentialRequestsShareOneConnection() throws Exception {
        server = new ScriptedServer(req -> "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        for (int i = 0; i < 5; i++) {
            assertEquals("ok", http.sendString(get("/x" + i)).body());
        }
        assertEquals(1, server.accepted.get());
        assertEquals(1, http.idleConnections());
    }

    @Test
    void writesTheBodyWithItsLengthAndAGetWithout() throws Exception {
        server = new ScriptedServer(req -> "HTTP/1.1 204 No Content\r\n\r\n");
        http.sendString(HttpRequest.newBuilder(server.uri("/e?q=a%3D%3D1")).header("Content-Type", "application/json")
                .method("PATCH", HttpRequest.BodyPublishers.ofString("{\"v\":\"é\"}")).build());
        http.sendString(get("/g"));
        String patch = server.requests.take();
        assertTrue(patch.startsWith("PATCH /e?q=a%3D%3D1 HTTP/1.1\r\n"), patch);
        assertTrue(patch.contains("\r\nContent-Length: 10\r\n"), patch);
        assertTrue(patch.contains("\r\nContent-Type: application/json\r\n"), patch);
        assertTrue(patch.endsWith("\r\n\r\n{\"v\":\"é\"}"), patch);
        String get = server.requests.take();
        assertTrue(get.startsWith("GET /g HTTP/1.1\r\nHost: 127.0.0.1:" + server.port() + "\r\n"), get);
        assertTrue(!get.toLowerCase().contains("content-length"), get);
    }

    @Test
    void readsAChunkedBodySkipsInterimAnswersAndKeepsTheConnection() throws Exception {
        server = new ScriptedServer(req -> "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
                + "X-A: 1\r\nx-a: 2\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n");
        HttpResponse<String> r = http.sendString(get("/c"));
        assertEquals(200, r.statusCode());
        assertEquals("abcde", r.body());
        assertEquals(List.of("1", "2"), r.headers().allValues("x-A"));
        http.sendString(get("/again"));
        assertEquals(1, server.accepted.get());
    }

    @Test
    void anAnswerWithConnectionCloseIsNotPooled() throws Exception {
        server = new ScriptedServer(req -> "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\n!");
        http.sendString(get("/1"));
        assertEquals(0, http.idleConnections());
        http.sendString(get("/2"));
        assertEquals(2, server.accepted.get());
    }

    @Test
    void aBodyWithoutLengthIsReadToTheEndAndTheConnectionNotReused() throws Exception {
        server = new ScriptedServer(req -> "HTTP/1.1 200 OK\r\n\r\nuntil the end", true);
        assertEquals("until the end", http.sendString(get("/1")).body());
        assertEquals(0, http.idleConnections());
    }

    @Test
    void aHeadAnswerHasNoBodyWhateverItsLengthSays() throws Exception {
        server = new ScriptedServer(req -> req.startsWith("HEAD ")
                ? "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n"
                : "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(server.uri("/h")).method("HEAD", HttpRequest.BodyPublishers.noBody()).build());
        assertArrayEquals(new byte[0], r.body());
        assertEquals("40", r.headers().firstValue("content-length").orElseThrow());
        assertEquals("ok", http.sendString(get("/after")).body());
        assertEquals(1, server.accepted.get(), "the HEAD answer left the connection clean for the next request");
    }

    @Test
    void aConnectionTheServerClosedIsNeverWrittenTo() throws Exception {
        // The server answers with a length, keeps nothing, and closes: the idle connection is dead.
        server = new ScriptedServer(req -> "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", true);
        http.sendString(get("/1"));
        assertEquals(1, http.idleConnections());
        server.awaitClosed(1);
        HttpResponse<String> r = http.sendString(HttpRequest.newBuilder(server.uri("/2"))
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build());
        assertEquals("ok", r.body());
        assertEquals(2, server.accepted.get());
        assertEquals(List.of(), server.bytesAfterClose, "nothing was written on the closed connection");
    }

    @Test
    void aSilentServerTimesOutAtTheRequestTimeout() throws Exception {
        server = new ScriptedServer(req -> null);
        long t0 = System.nanoTime();
        assertThrows(SocketTimeoutException.class, () -> http.sendString(HttpRequest.newBuilder(server.uri("/slow"))
                .timeout(Duration.ofMillis(300)).build()));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms >= 250 && ms < 10_000, ms + " ms");
        assertEquals(0, http.idleConnections());
    }

    @Test
    void aTruncatedBodyFailsAndIsNotPooled() throws Exception {
        server = new ScriptedServer(req -> "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", true);
        assertThrows(IOException.class, () -> http.sendString(get("/t")));
        assertEquals(0, http.idleConnections());
    }

    @Test
    void refusesHttps() {
        assertThrows(IllegalArgumentException.class, () -> http.sendString(HttpRequest.newBuilder(URI.create("https://127.0.0.1:1/")).build()));
    }

    @Test
    void manyWritersOnABrokerGetEveryAnswer() throws Exception {
        try (TestBroker b = TestBroker.start()) {
            int writers = 8;
            int each = 150;
            ExecutorService pool = Executors.newFixedThreadPool(writers);
            try {
                List<Future<Integer>> done = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    int id = w;
                    done.add(pool.submit(() -> {
                        int created = 0;
                        for (int i = 0; i < each; i++) {
                            HttpResponse<String> r = http.sendString(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/entities"))
                                    .header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"urn:ngsi-ld:K:" + id + "-" + i + "\",\"type\":\"K\"}"))
                                    .build());
                            created += r.statusCode() == 201 ? 1 : 0;
                        }
                        return created;
                    }));
                }
                int created = 0;
                for (Future<Integer> f : done) {
                    created += f.get(120, TimeUnit.SECONDS);
                }
                assertEquals(writers * each, created);
            } finally {
                pool.shutdownNow();
            }
            HttpResponse<String> count = http.sendString(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/entities?type=K&count=true&limit=0")).build());
            assertEquals(String.valueOf(writers * each), count.headers().firstValue("NGSILD-Results-Count").orElseThrow());
            assertTrue(http.idleConnections() <= writers, http.idleConnections() + " idle connections");
        }
    }

    private HttpRequest get(String path) {
        return HttpRequest.newBuilder(server.uri(path)).build();
    }

    /** A server on 127.0.0.1 that answers each request with what the script returns (null: never answers). */
    private static final class ScriptedServer implements AutoCloseable {
        final AtomicInteger accepted = new AtomicInteger();
        final BlockingQueue<String> requests = new LinkedBlockingQueue<>();
        final List<String> bytesAfterClose = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final AtomicInteger closedCount = new AtomicInteger();
        private final ServerSocket socket;
        private final Set<Socket> open = ConcurrentHashMap.newKeySet();
        private final Thread acceptor;

        ScriptedServer(Function<String, String> script) throws IOException {
            this(script, false);
        }

        /** {@code closeAfterAnswer}: close each connection after its first answer. */
        ScriptedServer(Function<String, String> script, boolean closeAfterAnswer) throws IOException {
            socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            acceptor = Thread.ofVirtual().start(() -> {
                while (!socket.isClosed()) {
                    try {
                        Socket s = socket.accept();
                        accepted.incrementAndGet();
                        open.add(s);
                        Thread.ofVirtual().start(() -> serve(s, script, closeAfterAnswer));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }

        private void serve(Socket s, Function<String, String> script, boolean closeAfterAnswer) {
            try (s) {
                InputStream in = s.getInputStream();
                while (true) {
                    String req = readRequest(in);
                    if (req == null) {
                        return;
                    }
                    requests.add(req);
                    String answer = script.apply(req);
                    if (answer == null) {
                        in.read();
                        return;
                    }
                    s.getOutputStream().write(answer.getBytes(StandardCharsets.UTF_8));
                    s.getOutputStream().flush();
                    if (closeAfterAnswer) {
                        s.shutdownOutput();
                        closedCount.incrementAndGet();
                        // whatever the client writes after our close is recorded, for the test to see
                        s.setSoTimeout(2_000);
                        try {
                            int c = in.read();
                            if (c >= 0) {
                                bytesAfterClose.add(String.valueOf((char) c));
                            }
                        } catch (IOException timeoutOrReset) {
                            // nothing came
                        }
                        return;
                    }
                }
            } catch (IOException e) {
                // the client went away
            } finally {
                open.remove(s);
            }
        }

        void awaitClosed(int n) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (closedCount.get() < n && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            assertTrue(closedCount.get() >= n, "the server closed " + closedCount.get() + " connections");
        }

        /** One request: header and a Content-Length body, as text; null at end of stream. */
        private static String readRequest(InputStream in) throws IOException {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            int c;
            while ((c = in.read()) != -1) {
                b.write(c);
                String s = b.toString(StandardCharsets.UTF_8);
                if (s.endsWith("\r\n\r\n")) {
                    int length = 0;
                    for (String line : s.split("\r\n")) {
                        if (line.toLowerCase().startsWith("content-length:")) {
                            length = Integer.parseInt(line.substring(15).trim());
                        }
                    }
                    b.writeBytes(in.readNBytes(length));
                    return b.toString(StandardCharsets.UTF_8);
                }
            }
            return null;
        }

        URI uri(String path) {
            return URI.create("http://127.0.0.1:" + port() + path);
        }

        int port() {
            return socket.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            socket.close();
            for (Socket s : open) {
                s.close();
            }
        }
    }
}
