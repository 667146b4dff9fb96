package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Date;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;

import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.proto.CorProtoClient;
import dev.cor.rest.proto.CorProtoError;
import dev.cor.rest.proto.CorProtoException;
import dev.cor.rest.proto.CorProtoResponse;

/**
 * The launcher's authentication, through the jar over real sockets: static bearer tokens
 * ({@code --tokens}), JWTs ({@code --jwtKey} with a JWKS and with a PEM key, made by the test),
 * and the {@code cor://} secret ({@code --corSecret}). Every refusal is a ProblemDetails with its
 * status, and a 401 carries a {@code Bearer} challenge.
 */
@Tag("process")
class AuthProcessTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ISSUER = "https://issuer.example";
    private static final String AUDIENCE = "cor-broker";
    private static final String RW = "rw-token-0123456789abcdef";
    private static final String RO = "ro-token-0123456789abcdef";
    private static final String ALL = "all-token-0123456789abcdef";

    @TempDir
    static Path dir;
    private static ServerProcess tokens;
    private static ServerProcess jwt;
    private static RSAKey rsa;
    private static ECKey ec;

    @BeforeAll
    static void start() throws Exception {
        Path file = dir.resolve("tokens");
        Files.writeString(file, """
                # TOKEN  TENANTS  ACCESS
                %s  -,city1  rw
                %s\tcity1\tro

                %s  *  ro
                """.formatted(RW, RO, ALL));
        tokens = ServerProcess.start("--store", "memory", "--tokens", file.toString());
        rsa = new RSAKeyGenerator(2048).keyID("r1").generate();
        ec = new ECKeyGenerator(Curve.P_256).keyID("e1").generate();
        Path jwks = dir.resolve("keys.jwks");
        Files.writeString(jwks, new JWKSet(List.of(rsa.toPublicJWK(), ec.toPublicJWK())).toString());
        jwt = ServerProcess.start("--store", "memory", "--jwtKey", jwks.toString(), "--jwtIssuer", ISSUER,
                "--jwtAudience", AUDIENCE);
    }

    @AfterAll
    static void stop() throws Exception {
        if (tokens != null) {
            tokens.close();
        }
        if (jwt != null) {
            jwt.close();
        }
    }

    private static String entity() {
        return "{\"id\":\"urn:ngsi-ld:T:" + UUID.randomUUID() + "\",\"type\":\"T\"}";
    }

    private static String bearer(String token) {
        return "Bearer " + token;
    }

    /** A ProblemDetails of {@code status} and {@code type}; a 401 with a Bearer challenge, a 403 without. */
    private static JsonNode assertProblem(HttpResponse<String> r, int status, String type) throws Exception {
        assertEquals(status, r.statusCode(), r.body());
        JsonNode p = JSON.readTree(r.body());
        assertEquals("https://uri.etsi.org/ngsi-ld/errors/" + type, p.path("type").asText(), r.body());
        assertEquals(status, p.path("status").asInt(), r.body());
        assertFalse(p.path("title").asText().isEmpty(), r.body());
        assertFalse(p.path("detail").asText().isEmpty(), r.body());
        String challenge = r.headers().firstValue("WWW-Authenticate").orElse(null);
        if (status == 401) {
            assertTrue(challenge != null && challenge.startsWith("Bearer realm=\"cor\""), "challenge: " + challenge);
        } else {
            assertNull(challenge);
        }
        return p;
    }

    // ------------------------------------------------------------------ static tokens

    @Test
    void aValidTokenWritesAndReadsItsTenants() throws Exception {
        String e = entity();
        assertEquals(201, tokens.send("POST", "/ngsi-ld/v1/entities", e, "Authorization", bearer(RW)).statusCode());
        String id = JSON.readTree(e).path("id").asText();
        HttpResponse<String> r = tokens.send("GET", "/ngsi-ld/v1/entities/" + id, null, "Authorization", bearer(RW));
        assertEquals(200, r.statusCode(), r.body());
        HttpResponse<String> inCity = tokens.send("POST", "/ngsi-ld/v1/entities", entity(), "Authorization", bearer(RW),
                "NGSILD-Tenant", "city1");
        assertEquals(201, inCity.statusCode(), inCity.body());
        // the scheme's name is case-insensitive (RFC 7235 § 2.1)
        assertEquals(200, tokens.send("GET", "/ngsi-ld/v1/entities/" + id, null, "Authorization", "bearer " + RW).statusCode());
    }

    @Test
    void noTokenIsUnauthorizedWithAChallenge() throws Exception {
        HttpResponse<String> r = tokens.send("GET", "/ngsi-ld/v1/types", null);
        assertProblem(r, 401, "Unauthorized");
        assertEquals("Bearer realm=\"cor\"", r.headers().firstValue("WWW-Authenticate").orElseThrow());
        assertProblem(tokens.send("GET", "/ngsi-ld/v1/types", null, "Authorization", "Basic dXNlcjpwYXNz"), 401, "Unauthorized");
    }

    @Test
    void anUnknownTokenIsUnauthorizedAsAnInvalidToken() throws Exception {
        HttpResponse<String> r = tokens.send("POST", "/ngsi-ld/v1/entities", entity(), "Authorization",
                bearer(RW.replace('0', 'x')));
        JsonNode p = assertProblem(r, 401, "Unauthorized");
        assertTrue(r.headers().firstValue("WWW-Authenticate").orElseThrow().contains("error=\"invalid_token\""));
        assertFalse(p.toString().contains("xabcdef"), "the answer never repeats the credential: " + p);
    }

    @Test
    void aTokenOutsideItsTenantsIsForbidden() throws Exception {
        JsonNode p = assertProblem(tokens.send("GET", "/ngsi-ld/v1/types", null, "Authorization", bearer(RW),
                "NGSILD-Tenant", "city2"), 403, "Forbidden");
        assertTrue(p.path("detail").asText().contains("city2"), p.toString());
        // the read-only token has city1, not the default tenant
        assertProblem(tokens.send("GET", "/ngsi-ld/v1/types", null, "Authorization", bearer(RO)), 403, "Forbidden");
        // a tenant that does not exist is not told apart from one that does: 403 comes first
        assertProblem(tokens.send("GET", "/ngsi-ld/v1/types", null, "Authorization", bearer(RW), "NGSILD-Tenant",
                "nosuch"), 403, "Forbidden");
    }

    @Test
    void aReadOnlyTokenReadsButDoesNotWrite() throws Exception {
        HttpResponse<String> w = tokens.send("POST", "/ngsi-ld/v1/entities", entity(), "Authorization", bearer(RO),
                "NGSILD-Tenant", "city1");
        JsonNode p = assertProblem(w, 403, "Forbidden");
        assertTrue(p.path("detail").asText().contains("read-only"), p.toString());
        assertProblem(tokens.send("POST", "/ngsi-ld/v1/entityOperations/upsert", "[" + entity() + "]", "Authorization",
                bearer(ALL), "NGSILD-Tenant", "city1"), 403, "Forbidden");
        // its tenant exists (a write of the rw token made it): the read-only token reads it
        assertEquals(201, tokens.send("POST", "/ngsi-ld/v1/entities", entity(), "Authorization", bearer(RW),
                "NGSILD-Tenant", "city1").statusCode());
        HttpResponse<String> r = tokens.send("GET", "/ngsi-ld/v1/entities?type=T", null, "Authorization", bearer(RO),
                "NGSILD-Tenant", "city1");
        assertEquals(200, r.statusCode(), r.body());
        assertFalse(JSON.readTree(r.body()).isEmpty(), r.body());
    }

    @Test
    void healthAndVersionAreOpenAndMetricsNeedsEveryTenant() throws Exception {
        assertEquals(200, tokens.send("GET", "/health", null).statusCode());
        assertEquals(200, tokens.send("GET", "/version", null).statusCode());
        assertProblem(tokens.send("GET", "/metrics", null), 401, "Unauthorized");
        assertProblem(tokens.send("GET", "/metrics", null, "Authorization", bearer(RW)), 403, "Forbidden");
        HttpResponse<String> m = tokens.send("GET", "/metrics", null, "Authorization", bearer(ALL));
        assertEquals(200, m.statusCode(), m.body());
        // the broker's families (its request counter appears with the first request it answers)
        assertTrue(m.body().contains("cor_ngsild_entities{tenant=\"\"}"), m.body());
    }

    @Test
    void aMalformedTokenFileStopsTheStartNamingTheLineNotTheToken() throws Exception {
        Path bad = dir.resolve("bad-tokens");
        Files.writeString(bad, "# ok\nsecret-token-0123456789 city1 rwx\n");
        try (ServerProcess s = ServerProcess.runToEnd("--tokens", bad.toString())) {
            assertEquals(CorServerMain.USAGE_ERROR, s.process.exitValue(), s.toString());
            assertTrue(s.stderr().contains("line 2"), s.stderr());
            assertFalse(s.stderr().contains("secret-token"), s.stderr());
        }
    }

    // ------------------------------------------------------------------ JWTs

    private static JWTClaimsSet.Builder claims() {
        return new JWTClaimsSet.Builder().issuer(ISSUER).audience(AUDIENCE).subject("alice")
                .expirationTime(new Date(System.currentTimeMillis() + 600_000)).claim("tenants", List.of("-", "city1"));
    }

    private static String sign(JWSSigner signer, JWSAlgorithm alg, String kid, JWTClaimsSet claims) throws Exception {
        SignedJWT t = new SignedJWT(new JWSHeader.Builder(alg).keyID(kid).build(), claims);
        t.sign(signer);
        return t.serialize();
    }

    private static String rs256(JWTClaimsSet claims) throws Exception {
        return sign(new RSASSASigner(rsa), JWSAlgorithm.RS256, "r1", claims);
    }

    private static HttpResponse<String> typesWith(String token, String... more) throws Exception {
        String[] h = new String[2 + more.length];
        h[0] = "Authorization";
        h[1] = bearer(token);
        System.arraycopy(more, 0, h, 2, more.length);
        return jwt.send("GET", "/ngsi-ld/v1/types", null, h);
    }

    private static void assertRefused(String token, String detailSays) throws Exception {
        HttpResponse<String> r = typesWith(token);
        JsonNode p = assertProblem(r, 401, "Unauthorized");
        assertTrue(r.headers().firstValue("WWW-Authenticate").orElseThrow().contains("error=\"invalid_token\""));
        assertTrue(p.path("detail").asText().contains(detailSays), p.toString());
    }

    @Test
    void aValidJwtOfEitherKeyWritesItsTenants() throws Exception {
        String token = rs256(claims().build());
        HttpResponse<String> c = jwt.send("POST", "/ngsi-ld/v1/entities", entity(), "Authorization", bearer(token));
        assertEquals(201, c.statusCode(), c.body());
        assertEquals(200, typesWith(token).statusCode());
        assertEquals(200, typesWith(token).statusCode(), "once cached, still valid");
        String es = sign(new ECDSASigner(ec), JWSAlgorithm.ES256, "e1", claims().build());
        HttpResponse<String> r = jwt.send("POST", "/ngsi-ld/v1/entities", entity(), "Authorization", bearer(es),
                "NGSILD-Tenant", "city1");
        assertEquals(201, r.statusCode(), r.body());
    }

    @Test
    void anExpiredJwtIsUnauthorized() throws Exception {
        assertRefused(rs256(claims().expirationTime(new Date(System.currentTimeMillis() - 3_600_000)).build()), "expired");
    }

    @Test
    void aJwtWithoutExpiryIsUnauthorized() throws Exception {
        assertRefused(rs256(claims().expirationTime(null).build()), "exp");
    }

    @Test
    void aJwtOfAnotherIssuerOrAudienceIsUnauthorized() throws Exception {
        assertRefused(rs256(claims().issuer("https://evil.example").build()), "issuer or audience");
        assertRefused(rs256(claims().audience("another-service").build()), "issuer or audience");
    }

    @Test
    void aJwtSignedByAnotherKeyIsUnauthorized() throws Exception {
        RSAKey other = new RSAKeyGenerator(2048).keyID("r1").generate();
        assertRefused(sign(new RSASSASigner(other), JWSAlgorithm.RS256, "r1", claims().build()), "signature");
        // a valid token with one byte of its signature changed
        String good = rs256(claims().build());
        int i = good.lastIndexOf('.') + 5;
        String tampered = good.substring(0, i) + (good.charAt(i) == 'A' ? 'B' : 'A') + good.substring(i + 1);
        assertRefused(tampered, "signature");
    }

    @Test
    void anUnsignedJwtIsUnauthorized() throws Exception { // alg=none
        assertRefused(new PlainJWT(claims().build()).serialize(), "not signed with an algorithm");
    }

    @Test
    void anHs256JwtKeyedWithThePublicKeyIsUnauthorized() throws Exception { // the algorithm confusion attack
        byte[] publicKey = rsa.toRSAPublicKey().getEncoded();
        assertRefused(sign(new MACSigner(publicKey), JWSAlgorithm.HS256, "r1", claims().build()), "not signed with an algorithm");
        byte[] jwks = new JWKSet(rsa.toPublicJWK()).toString().getBytes(StandardCharsets.UTF_8);
        assertRefused(sign(new MACSigner(jwks), JWSAlgorithm.HS256, "r1", claims().build()), "not signed with an algorithm");
        // an RSA key's token claiming ES256: the key fixes the algorithm
        assertRefused(sign(new ECDSASigner(new ECKeyGenerator(Curve.P_256).generate()), JWSAlgorithm.ES256, "r1",
                claims().build()), "not signed with an algorithm");
    }

    @Test
    void aJwtOutsideItsTenantsIsForbidden() throws Exception {
        String token = rs256(claims().build());
        assertProblem(typesWith(token, "NGSILD-Tenant", "city2"), 403, "Forbidden");
        String none = rs256(claims().claim("tenants", null).build());
        assertProblem(typesWith(none), 403, "Forbidden");
    }

    @Test
    void aPemKeyVerifiesItsOwnAlgorithmOnly() throws Exception {
        Path pem = dir.resolve("ec.pem");
        Files.writeString(pem, "-----BEGIN PUBLIC KEY-----\n"
                + java.util.Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(
                        ec.toECPublicKey().getEncoded()) + "\n-----END PUBLIC KEY-----\n");
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--jwtKey", pem.toString(), "--jwtIssuer", ISSUER,
                "--jwtAudience", AUDIENCE, "--jwtTenantsClaim", "ngsild_tenants")) {
            JWTClaimsSet c = claims().claim("tenants", null).claim("ngsild_tenants", "*").build();
            String es = sign(new ECDSASigner(ec), JWSAlgorithm.ES256, null, c);
            HttpResponse<String> ok = s.send("GET", "/ngsi-ld/v1/types", null, "Authorization", bearer(es), "NGSILD-Tenant", "any");
            assertEquals(404, ok.statusCode(), "past the authorization, the tenant does not exist: " + ok.body());
            assertTrue(ok.body().contains("NonexistentTenant"), ok.body());
            String rs = sign(new RSASSASigner(rsa), JWSAlgorithm.RS256, null, c);
            assertProblem(s.send("GET", "/ngsi-ld/v1/types", null, "Authorization", bearer(rs)), 401, "Unauthorized");
        }
    }

    // ------------------------------------------------------------------ cor://

    @Test
    void aCorPeerWithoutTheSecretIsRefusedAtHello() throws Exception {
        Path secret = dir.resolve("cor-secret");
        Files.writeString(secret, "a-shared-secret-of-some-length\n");
        int corPort = ServerProcess.freePort();
        try (ServerProcess s = ServerProcess.start("--store", "memory", "--corPort", String.valueOf(corPort),
                "--corSecret", secret.toString())) {
            s.awaitStdout("cor://", Duration.ofSeconds(30));
            Matcher m = Pattern.compile("cor://127\\.0\\.0\\.1:(\\d+)").matcher(s.stdout());
            assertTrue(m.find(), s.stdout());
            int port = Integer.parseInt(m.group(1));
            for (String token : new String[] {null, "a-shared-secret-of-some-lengtH"}) {
                CorProtoClient c = CorProtoClient.builder().token(token).build();
                try {
                    CorProtoException e = assertThrows(CorProtoException.class, () -> c.send("GET", "127.0.0.1", port,
                            "/ngsi-ld/v1/types", null, new CorRestHeaders(), null, null));
                    assertEquals(CorProtoError.UNAUTHORIZED, e.code(), e.toString());
                } finally {
                    c.close();
                }
            }
            CorProtoClient c = CorProtoClient.builder().token("a-shared-secret-of-some-length").build();
            try {
                CorProtoResponse r = c.send("GET", "127.0.0.1", port, "/ngsi-ld/v1/types", null, new CorRestHeaders(), null, null);
                assertEquals(200, r.status(), r.toString());
            } finally {
                c.close();
            }
        }
    }
}
