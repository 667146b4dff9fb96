package dev.cor.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.BadJWSException;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;

/**
 * Verifies the JWTs of {@code --jwtKey} with nimbus-jose-jwt: the signature with one of the
 * configured public keys, whose type fixes the algorithm (an RSA key of 2048 bits or more:
 * RS256; an EC P-256 key: ES256) - never the token's {@code alg}, so {@code none} and HS256
 * signed with a public key are refused; {@code exp} required and checked, {@code iss} and
 * {@code aud} exactly as configured. A verified token's tenants claim becomes its {@link Grant}
 * (every JWT may write on its tenants), kept in {@link VerifiedTokens} until the token expires.
 * Built on the main thread; {@link #verify} is thread-safe and, for a cached token, a map look-up.
 */
final class JwtVerifier {
    /** A clock skew tolerated on exp and nbf (nimbus' default, 60 s), also added to a cached token's life. */
    static final int SKEW_SECONDS = 60;
    static final int MAX_JWT_CHARS = 8192;

    /** A verification's outcome: the grant, or why not (a fixed text, never a part of the token). */
    record Outcome(Grant grant, String refusal) {
    }

    private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
    private final String tenantsClaim;
    private final VerifiedTokens cache;

    JwtVerifier(JWKSet keys, String issuer, String audience, String tenantsClaim, VerifiedTokens cache) {
        this.tenantsClaim = tenantsClaim;
        this.cache = cache;
        Set<JWSAlgorithm> algorithms = new HashSet<>();
        for (JWK k : keys.getKeys()) {
            algorithms.add(algorithmOf(k));
        }
        processor.setJWSKeySelector(new JWSVerificationKeySelector<>(algorithms, new ImmutableJWKSet<>(keys)));
        DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(audience,
                new JWTClaimsSet.Builder().issuer(issuer).build(), Set.of("exp", "iss", "aud"));
        claims.setMaxClockSkew(SKEW_SECONDS);
        processor.setJWTClaimsSetVerifier(claims);
    }

    /** The public keys of a PEM file (one key) or a JWKS file; a key of another kind stops the start. */
    static JWKSet readKeys(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("--jwtKey: cannot read " + file + ": " + e.getMessage(), e);
        }
        List<JWK> keys = new ArrayList<>();
        try {
            if (text.stripLeading().startsWith("{")) {
                keys.addAll(JWKSet.parse(text).getKeys());
            } else {
                keys.add(pemPublicKey(text));
            }
        } catch (java.text.ParseException | java.security.GeneralSecurityException | RuntimeException e) {
            throw new IllegalArgumentException("--jwtKey " + file + " holds no PEM public key or JWKS: " + e.getMessage(), e);
        }
        List<JWK> publicKeys = new ArrayList<>();
        for (JWK k : keys) {
            if (k.getKeyUse() != null && !KeyUse.SIGNATURE.equals(k.getKeyUse())) {
                continue; // an encryption key of the set is not ours to verify with
            }
            algorithmOf(k); // refuses what it cannot verify with
            publicKeys.add(k.toPublicJWK());
        }
        if (publicKeys.isEmpty()) {
            throw new IllegalArgumentException("--jwtKey " + file + " holds no signature key");
        }
        return new JWKSet(publicKeys);
    }

    /**
     * The key of a PEM {@code PUBLIC KEY} (X.509 SubjectPublicKeyInfo) or {@code CERTIFICATE}, read
     * with the JDK (nimbus' own PEM parser needs BouncyCastle).
     */
    static JWK pemPublicKey(String pem) throws java.security.GeneralSecurityException {
        java.security.PublicKey key;
        if (pem.contains("-----BEGIN CERTIFICATE-----")) {
            key = java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificate(new java.io.ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))
                    .getPublicKey();
        } else {
            int begin = pem.indexOf("-----BEGIN PUBLIC KEY-----");
            int end = pem.indexOf("-----END PUBLIC KEY-----");
            if (begin < 0 || end < begin) {
                throw new IllegalArgumentException("no -----BEGIN PUBLIC KEY----- or -----BEGIN CERTIFICATE----- block");
            }
            byte[] der = java.util.Base64.getMimeDecoder().decode(pem.substring(begin + 26, end));
            var spec = new java.security.spec.X509EncodedKeySpec(der);
            try {
                key = java.security.KeyFactory.getInstance("RSA").generatePublic(spec);
            } catch (java.security.spec.InvalidKeySpecException notRsa) {
                key = java.security.KeyFactory.getInstance("EC").generatePublic(spec);
            }
        }
        if (key instanceof java.security.interfaces.RSAPublicKey r) {
            return new RSAKey.Builder(r).build();
        }
        if (key instanceof java.security.interfaces.ECPublicKey e) {
            Curve c = Curve.forECParameterSpec(e.getParams());
            if (c == null) {
                throw new IllegalArgumentException("an EC key of an unknown curve");
            }
            return new ECKey.Builder(c, e).build();
        }
        throw new IllegalArgumentException("a " + key.getAlgorithm() + " key");
    }

    /** The one algorithm a key verifies: RS256 for RSA of 2048 bits or more, ES256 for EC P-256. */
    static JWSAlgorithm algorithmOf(JWK k) {
        JWSAlgorithm a;
        if (k instanceof RSAKey r && r.size() >= 2048) {
            a = JWSAlgorithm.RS256;
        } else if (k instanceof ECKey e && Curve.P_256.equals(e.getCurve())) {
            a = JWSAlgorithm.ES256;
        } else {
            throw new IllegalArgumentException("--jwtKey takes RSA public keys of 2048 bits or more (RS256) and EC P-256"
                    + " ones (ES256), not a " + k.getKeyType() + " key" + (k.getKeyID() == null ? "" : " (kid " + k.getKeyID() + ")"));
        }
        if (k.getAlgorithm() != null && !a.equals(k.getAlgorithm())) {
            throw new IllegalArgumentException("--jwtKey: a " + k.getKeyType() + " key verifies " + a + ", not "
                    + k.getAlgorithm() + (k.getKeyID() == null ? "" : " (kid " + k.getKeyID() + ")"));
        }
        return a;
    }

    /** Whether {@code token} has a JWS's shape (three parts): the others are not this verifier's. */
    static boolean looksLikeJwt(String token) {
        int a = token.indexOf('.');
        return a > 0 && token.indexOf('.', a + 1) > a;
    }

    /** The grant of a token: from the cache while it lives, else verified (and then cached). */
    Outcome verify(String token, long nowMs) {
        Grant g = cache.get(token, nowMs);
        if (g != null) {
            return new Outcome(g, null);
        }
        if (token.length() > MAX_JWT_CHARS) {
            return new Outcome(null, "the token is longer than " + MAX_JWT_CHARS + " characters");
        }
        JWTClaimsSet claims;
        try {
            claims = processor.process(token, null);
        } catch (BadJWTException e) {
            String m = String.valueOf(e.getMessage());
            return new Outcome(null, m.startsWith("Expired") ? "the token has expired"
                    : m.contains("before use time") ? "the token is not valid yet"
                    : "the token's issuer or audience is not the one this broker accepts, or it has no exp");
        } catch (BadJWSException e) {
            return new Outcome(null, "the token's signature does not verify with this broker's keys");
        } catch (BadJOSEException e) {
            return new Outcome(null, "the token is not signed with an algorithm and key this broker accepts (RS256 or ES256)");
        } catch (java.text.ParseException | JOSEException | RuntimeException e) {
            return new Outcome(null, "the token is not a JWT this broker can read");
        }
        Grant grant = Grant.of("this token", tenants(claims.getClaim(tenantsClaim)), true);
        Date exp = claims.getExpirationTime();
        cache.put(token, grant, exp.getTime() + SKEW_SECONDS * 1000L, nowMs);
        return new Outcome(grant, null);
    }

    private static List<String> tenants(Object claim) {
        List<String> names = new ArrayList<>();
        if (claim instanceof String s) {
            names.add(s.isEmpty() ? Grant.DEFAULT : s);
        } else if (claim instanceof List<?> l) {
            for (Object o : l) {
                if (o instanceof String s) {
                    names.add(s.isEmpty() ? Grant.DEFAULT : s);
                }
            }
        }
        return names;
    }
}
