package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.rest.CorRestJson;

/**
 * The jar on HTTPS ({@code --https --key --cert}) with a CA made by the test: clients that trust
 * the CA - the JDK's HttpClient, curl - are served over TLS 1.3 and 1.2; a TLS 1.1 hello is refused
 * even by a JVM whose security properties allow TLS 1.1; plain HTTP to the port is closed, and the
 * broker serves on.
 */
@Tag("process")
class HttpsProcessTest {
    private static final String ENTITY = """
            {"id": "urn:ngsi-ld:Room:tls1", "type": "Room", "temperature": {"type": "Property", "value": 21}}""";

    private static TestPki pki;
    private static ServerProcess server;

    @BeforeAll
    static void start() throws Exception {
        pki = TestPki.make("EC");
        server = ServerProcess.startHttps(ServerProcess.command(), pki.clientContext("TLS"), "--httpLoops", "1",
                "--store", "memory", "--https", "--key", pki.key.toString(), "--cert", pki.cert.toString());
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        if (pki != null) {
            pki.delete();
        }
    }

    @Test
    void aJdkClientTrustingTheCaCreatesAndReadsAnEntityOverTls13() throws Exception {
        assertTrue(server.stdout().contains("NGSI-LD broker on https://127.0.0.1:" + server.port), server.stdout());
        HttpResponse<String> created = server.send("POST", "/ngsi-ld/v1/entities", ENTITY);
        assertEquals(201, created.statusCode(), created.body());
        HttpResponse<String> read = server.send("GET", "/ngsi-ld/v1/entities/urn:ngsi-ld:Room:tls1", null);
        assertEquals(200, read.statusCode(), read.body());
        assertEquals(21, CorRestJson.mapper().readTree(read.body()).path("temperature").path("value").asInt());
        assertEquals("TLSv1.3", read.sslSession().orElseThrow().getProtocol());
        JsonNode flags = CorRestJson.mapper().readTree(server.send("GET", "/version", null).body()).path("flags");
        assertTrue(flags.path("https").asBoolean(), flags.toString());
    }

    @Test
    void aJdkClientLimitedToTls12IsServed() throws Exception {
        var client = java.net.http.HttpClient.newBuilder().sslContext(pki.clientContext("TLSv1.2"))
                .sslParameters(new javax.net.ssl.SSLParameters(null, new String[] {"TLSv1.2"}))
                .version(java.net.http.HttpClient.Version.HTTP_1_1).build();
        HttpResponse<String> r = client.send(java.net.http.HttpRequest.newBuilder(server.uri("/health"))
                .timeout(java.time.Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        assertEquals("TLSv1.2", r.sslSession().orElseThrow().getProtocol());
    }

    @Test
    void curlTrustingTheCaIsServedAndCurlWithoutItIsRefused() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/curl")), "curl is not installed");
        String url = server.uri("/ngsi-ld/v1/types").toString();
        Result trusted = curl("-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", pki.ca.toString(), url);
        assertEquals(0, trusted.exit, trusted.out);
        assertEquals("200", trusted.out.strip());
        Result tls12 = curl("-sS", "-o", "/dev/null", "-w", "%{http_code}", "--tlsv1.2", "--tls-max", "1.2",
                "--cacert", pki.ca.toString(), url);
        assertEquals("200", tls12.out.strip(), tls12.out);
        Result untrusted = curl("-sS", "-o", "/dev/null", url);
        assertEquals(60, untrusted.exit, "curl's 'peer certificate cannot be authenticated': " + untrusted.out);
    }

    @Test
    void plainHttpToTheHttpsPortIsClosedAndTheBrokerServesOn() throws Exception {
        try (Socket plain = new Socket(InetAddress.getLoopbackAddress(), server.port)) {
            plain.setSoTimeout(10_000);
            plain.getOutputStream().write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            plain.getOutputStream().flush();
            byte[] got = readToEnd(plain.getInputStream());
            String text = new String(got, StandardCharsets.ISO_8859_1);
            assertTrue(!text.startsWith("HTTP/"), "no HTTP answer in plaintext: " + text);
        }
        assertEquals(200, server.send("GET", "/health", null).statusCode(), "served on after the plain request");
    }

    @Test
    void aTls11HelloIsRefusedEvenWhenTheJvmAllowsTls11() throws Exception {
        // The server's JVM re-enables TLS 1.0 and 1.1 through its security properties: only the
        // broker's own rule (TLS 1.3 and 1.2) stands between a TLS 1.1 client and a session.
        Path props = pki.dir.resolve("tls11.security");
        Files.writeString(props, "jdk.tls.disabledAlgorithms=SSLv3, RC4, NULL, anon\n");
        List<String> launcher = new ArrayList<>(List.of(ServerProcess.java(), "-Djava.security.properties=" + props,
                "-jar", ServerProcess.jar()));
        try (ServerProcess lax = ServerProcess.startHttps(launcher, pki.clientContext("TLS"), "--httpLoops", "1",
                "--store", "memory", "--https", "--key", pki.key.toString(), "--cert", pki.cert.toString())) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), lax.port)) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write(Tls11Hello.bytes());
                s.getOutputStream().flush();
                byte[] got = readToEnd(s.getInputStream());
                assertTrue(got.length >= 7, "an alert before the close, got " + got.length + " bytes");
                assertEquals(0x15, got[0], "a TLS alert record, not a ServerHello (0x16)");
                assertEquals(70, got[6], "alert protocol_version");
            }
            assertEquals(200, lax.send("GET", "/health", null).statusCode(), "TLS 1.3 still served");
        }
    }

    /** Everything until the server closes; fails when it does not close within the socket's timeout. */
    private static byte[] readToEnd(InputStream in) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[4096];
        try {
            for (int n; (n = in.read(buf)) != -1; ) {
                out.write(buf, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server did not close the connection within 10 s; got "
                    + out.size() + " bytes", e);
        } catch (java.net.SocketException reset) {
            // a reset is a close too
        }
        return out.toByteArray();
    }

    private record Result(int exit, String out) {
    }

    private static Result curl(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/curl", "--max-time", "30"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "curl ended");
        return new Result(p.exitValue(), out);
    }
}
