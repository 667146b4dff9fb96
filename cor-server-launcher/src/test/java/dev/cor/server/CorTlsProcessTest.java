package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.proto.CorProtoClient;
import dev.cor.rest.proto.CorProtoError;
import dev.cor.rest.proto.CorProtoException;
import dev.cor.rest.proto.CorProtoResponse;

/**
 * {@code --https --corPort}: the launcher serves {@code cors://} - the cor:// protocol inside TLS
 * with the broker port's key and certificate - and another broker forwards to it through a
 * registration whose endpoint is {@code cors://}; {@code --corSecret} is still asked at HELLO,
 * now inside TLS. A CA and a server certificate made by keytool ({@link TestPki}).
 */
@Tag("process")
class CorTlsProcessTest {
    private static final String SECRET = "a-shared-secret-of-some-length";
    private static TestPki pki;
    private static Path trustStore;

    @BeforeAll
    static void makePki() throws Exception {
        pki = TestPki.make("EC");
        // The forwarding broker trusts the CA through the JVM's own trust-store property.
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(pki.ca)) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        trustStore = pki.dir.resolve("trust.p12");
        try (OutputStream out = Files.newOutputStream(trustStore)) {
            trust.store(out, "changeit".toCharArray());
        }
    }

    @AfterAll
    static void deletePki() throws Exception {
        pki.delete();
    }

    private static ServerProcess httpsBrokerWithCors(int corPort, String... more) throws Exception {
        List<String> flags = new java.util.ArrayList<>(List.of("--store", "memory", "--httpLoops", "1", "--brokerId", "TLS-SOURCE",
                "--https", "--key", pki.key.toString(), "--cert", pki.cert.toString(), "--corPort", String.valueOf(corPort)));
        flags.addAll(List.of(more));
        ServerProcess s = ServerProcess.startHttps(ServerProcess.command(), pki.clientContext("TLS"), flags.toArray(String[]::new));
        s.awaitStdout("cors://", Duration.ofSeconds(30));
        Matcher m = Pattern.compile("cors://127\\.0\\.0\\.1:(\\d+)").matcher(s.stdout());
        assertTrue(m.find(), "the start line names the cors:// port: " + s.stdout());
        assertEquals(corPort, Integer.parseInt(m.group(1)));
        return s;
    }

    @Test
    void aSecondBrokerForwardsThroughACorsRegistrationToTheHttpsBrokersCorPort() throws Exception {
        int corPort = ServerProcess.freePort();
        try (ServerProcess source = httpsBrokerWithCors(corPort);
                ServerProcess front = ServerProcess.start(List.of(ServerProcess.java(),
                        "-Djavax.net.ssl.trustStore=" + trustStore, "-Djavax.net.ssl.trustStorePassword=changeit",
                        "-jar", ServerProcess.jar()), java.util.Map.of(), null,
                        "--store", "memory", "--httpLoops", "1", "--brokerId", "FRONT")) {
            String id = "urn:ngsi-ld:Vehicle:tls1";
            HttpResponse<String> created = source.send("POST", "/ngsi-ld/v1/entities",
                    "{\"id\":\"" + id + "\",\"type\":\"Vehicle\",\"speed\":{\"type\":\"Property\",\"value\":80}}");
            assertEquals(201, created.statusCode(), created.body());
            String registration = ("{\"id\":\"urn:ngsi-ld:ContextSourceRegistration:tls1\",\"type\":\"ContextSourceRegistration\","
                    + "\"information\":[{\"entities\":[{\"type\":\"Vehicle\"}]}],\"mode\":\"inclusive\","
                    + "\"operations\":[\"retrieveOps\"],\"endpoint\":\"cors://127.0.0.1:%d\"}").formatted(corPort);
            HttpResponse<String> registered = front.send("POST", "/ngsi-ld/v1/csourceRegistrations", registration);
            assertEquals(201, registered.statusCode(), "a cors:// endpoint is accepted: " + registered.body());

            HttpResponse<String> r = front.send("GET", "/ngsi-ld/v1/entities/" + id, null);
            assertEquals(200, r.statusCode(), r.body());
            assertTrue(r.body().contains("\"value\":80"), "the source's entity, forwarded over cors://: " + r.body());
            assertFalse(r.headers().firstValue("NGSILD-Warning").isPresent(), "no source failed: " + r.headers().map());
            assertTrue(source.metrics().value("cor_proto_requests_total") >= 1, "it came in over the cors:// port");
        }
    }

    @Test
    void theCorSecretIsStillAskedAtHelloInsideTls() throws Exception {
        Path secret = pki.dir.resolve("cor-secret");
        Files.writeString(secret, SECRET + "\n");
        int corPort = ServerProcess.freePort();
        try (ServerProcess s = httpsBrokerWithCors(corPort, "--corSecret", secret.toString())) {
            for (String token : new String[] {null, SECRET.substring(1) + "X"}) {
                CorProtoClient c = CorProtoClient.builder().tls(pki.clientContext("TLS")).token(token).build();
                try {
                    CorProtoException e = assertThrows(CorProtoException.class, () -> types(c, corPort));
                    assertEquals(CorProtoError.UNAUTHORIZED, e.code(), e.toString());
                } finally {
                    c.close();
                }
            }
            CorProtoClient good = CorProtoClient.builder().tls(pki.clientContext("TLS")).token(SECRET).build();
            try {
                assertEquals(200, types(good, corPort).status());
            } finally {
                good.close();
            }
            // The secret never travels in clear: a plain client does not get as far as HELLO-ACK.
            CorProtoClient plain = CorProtoClient.builder().token(SECRET).connectTimeoutMs(5000).build();
            try {
                CorProtoException e = assertThrows(CorProtoException.class, () -> types(plain, corPort));
                assertEquals(CorProtoException.Kind.CONNECT, e.kind(), e.toString());
            } finally {
                plain.close();
            }
            assertEquals(200, s.send("GET", "/health", null).statusCode(), "the broker serves on");
        }
    }

    private static CorProtoResponse types(CorProtoClient c, int port) throws CorProtoException {
        return c.send("GET", "127.0.0.1", port, "/ngsi-ld/v1/types", null, new CorRestHeaders(), null, null);
    }
}
