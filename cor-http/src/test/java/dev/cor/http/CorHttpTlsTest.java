package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** HTTPS on the loops, with a certificate made at test time by keytool. */
class CorHttpTlsTest {
    private static CorHttpServer server;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("cor-tls");
        Path store = dir.resolve("server.p12");
        char[] pass = "changeit".toCharArray();
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
                "-ext", "san=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", store.toString(), "-storepass", "changeit", "-keypass", "changeit").inheritIO().start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "keytool made the test certificate");
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = new FileInputStream(store.toFile())) {
            ks.load(in, pass);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pass);
        SSLContext serverCtx = SSLContext.getInstance("TLS");
        serverCtx.init(kmf.getKeyManagers(), null, null);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext clientCtx = SSLContext.getInstance("TLS");
        clientCtx.init(null, tmf.getTrustManagers(), null);
        server = CorHttpServer.builder().host("127.0.0.1").port(0).loops(2).application(new TestApp())
                .coroutineHook(r -> true).tls(serverCtx).headerTimeoutMs(500).build().start();
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(clientCtx).build();
    }

    @AfterAll
    static void stop() {
        server.stop(500);
    }

    private static URI uri(String path) {
        return URI.create("https://127.0.0.1:" + server.port() + path);
    }

    @Test
    void httpsRequestsAreAnsweredOnOneKeptAliveConnection() throws Exception {
        for (String path : List.of("/hello", "/slow?ms=20", "/id?n=3")) {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), path);
        }
        assertEquals("7", client.send(HttpRequest.newBuilder(uri("/nowait?n=7")).build(), HttpResponse.BodyHandlers.ofString()).body());
    }

    @Test
    void bodiesSpanningManyTlsRecordsArriveWholeBothWays() throws Exception {
        byte[] up = new byte[300 * 1024];
        for (int i = 0; i < up.length; i++) {
            up[i] = (byte) (i * 31);
        }
        HttpResponse<byte[]> echo = client.send(HttpRequest.newBuilder(uri("/echo")).header("Content-Type", "application/octet-stream")
                .POST(HttpRequest.BodyPublishers.ofByteArray(up)).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertTrue(java.util.Arrays.equals(up, echo.body()), "echoed 300 KiB intact");
        for (String path : List.of("/big?bytes=5000000", "/big-co?bytes=5000000")) {
            HttpResponse<byte[]> big = client.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertEquals(5_000_000, big.body().length, path);
            assertEquals((byte) ('a' + 4_999_999 % 26), big.body()[4_999_999], path);
        }
    }

    @Test
    void aClientThatNeverHandshakesIsClosedAndOthersAreServed() throws Exception {
        try (RawHttp silent = new RawHttp(server.port())) {
            long t0 = System.nanoTime();
            assertTrue(silent.closedByServer(), "closed after the handshake deadline");
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms >= 400 && ms < 4000, "closed after " + ms + " ms");
        }
        assertEquals(200, client.send(HttpRequest.newBuilder(uri("/hello")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    @Test
    void plainHttpToTheTlsPortIsClosedAndTheServerLivesOn() throws Exception {
        try (RawHttp plain = new RawHttp(server.port())) {
            plain.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
            assertTrue(closesSoon(plain), "a plain request on the TLS port ends the connection");
        }
        assertEquals(200, client.send(HttpRequest.newBuilder(uri("/hello")).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    /** Reads until the server ends the connection (an alert may come first); false on a timeout. */
    private static boolean closesSoon(RawHttp c) throws Exception {
        try {
            InputStream in = c.socket.getInputStream();
            while (in.read() != -1) {
                // a TLS alert, then the end
            }
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.net.SocketException e) {
            return true;
        }
    }
}
