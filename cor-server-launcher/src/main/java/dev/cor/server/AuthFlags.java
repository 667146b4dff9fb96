package dev.cor.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import dev.cor.ngsild.policy.NgsildAuthorizer;

/**
 * The launcher's authentication flags: {@code --tokens FILE} (static bearer tokens,
 * {@link TokenFile}), {@code --jwtKey FILE} with {@code --jwtIssuer}, {@code --jwtAudience} and
 * {@code --jwtTenantsClaim} (JWTs, {@link JwtVerifier}), and {@code --corSecret FILE} (the shared
 * secret a {@code cor://} peer proves at HELLO). Parsed with the other flags on the main thread;
 * the files are read by {@link #authorizer} and {@link #corSecret} at start.
 *
 * @param tokens       {@code --tokens}, or {@code null}
 * @param jwtKey       {@code --jwtKey}, or {@code null}
 * @param jwtIssuer    {@code --jwtIssuer} (required with {@code --jwtKey})
 * @param jwtAudience  {@code --jwtAudience} (required with {@code --jwtKey})
 * @param tenantsClaim {@code --jwtTenantsClaim}, default {@value #DEFAULT_TENANTS_CLAIM}
 * @param corSecret    {@code --corSecret}, or {@code null}
 */
record AuthFlags(String tokens, String jwtKey, String jwtIssuer, String jwtAudience, String tenantsClaim, String corSecret) {
    static final String DEFAULT_TENANTS_CLAIM = "tenants";
    /** Verified JWTs kept: entries and bytes. */
    static final int CACHE_ENTRIES = 10_000;
    static final long CACHE_BYTES = 16L * 1024 * 1024;

    static final AuthFlags NONE = new AuthFlags(null, null, null, null, DEFAULT_TENANTS_CLAIM, null);

    /** The flags' lines of {@code --help}, indented as the others. */
    static final String USAGE = """
              --tokens FILE       requests need Authorization: Bearer TOKEN, a token of FILE; one a line:
                                  TOKEN TENANTS ro|rw, TENANTS comma-separated (* every tenant, - the default
                                  one); 401 without a valid token, 403 past its grant (default: no auth)
              --jwtKey FILE       requests need a JWT signed by a key of FILE (a PEM public key or a JWKS):
                                  RSA -> RS256, EC P-256 -> ES256, whatever the token says; exp checked
              --jwtIssuer ISS     the iss JWTs must carry (required with --jwtKey)
              --jwtAudience AUD   the aud JWTs must carry (required with --jwtKey)
              --jwtTenantsClaim C the claim naming a JWT's tenants (default tenants): a name or an array,
                                  * every tenant, - the default one; a JWT may read and write them
              --corSecret FILE    the shared secret (FILE's first line) a cor:// peer sends in HELLO; without
                                  it, refused at HELLO (default: none asked)""".indent(2);

    /** Whether {@code flag} is one of these. */
    static boolean takes(String flag) {
        return switch (flag) {
            case "--tokens", "--jwtKey", "--jwtIssuer", "--jwtAudience", "--jwtTenantsClaim", "--corSecret" -> true;
            default -> false;
        };
    }

    /** These flags with {@code flag} set to {@code value}. */
    AuthFlags with(String flag, String value) {
        if (value.isBlank()) {
            throw new IllegalArgumentException(flag + " takes a value, not an empty string");
        }
        return switch (flag) {
            case "--tokens" -> new AuthFlags(value, jwtKey, jwtIssuer, jwtAudience, tenantsClaim, corSecret);
            case "--jwtKey" -> new AuthFlags(tokens, value, jwtIssuer, jwtAudience, tenantsClaim, corSecret);
            case "--jwtIssuer" -> new AuthFlags(tokens, jwtKey, value, jwtAudience, tenantsClaim, corSecret);
            case "--jwtAudience" -> new AuthFlags(tokens, jwtKey, jwtIssuer, value, tenantsClaim, corSecret);
            case "--jwtTenantsClaim" -> new AuthFlags(tokens, jwtKey, jwtIssuer, jwtAudience, value, corSecret);
            case "--corSecret" -> new AuthFlags(tokens, jwtKey, jwtIssuer, jwtAudience, tenantsClaim, value);
            default -> throw new IllegalArgumentException("unknown option " + flag);
        };
    }

    /** The flags once all are read: what one needs of another. */
    AuthFlags checked() {
        if (jwtKey != null && (jwtIssuer == null || jwtAudience == null)) {
            throw new IllegalArgumentException("--jwtKey needs --jwtIssuer and --jwtAudience");
        }
        if (jwtKey == null && (jwtIssuer != null || jwtAudience != null || !tenantsClaim.equals(DEFAULT_TENANTS_CLAIM))) {
            throw new IllegalArgumentException("--jwtIssuer, --jwtAudience and --jwtTenantsClaim go with --jwtKey");
        }
        return this;
    }

    /** Whether requests need a credential. */
    boolean enabled() {
        return tokens != null || jwtKey != null;
    }

    /** The authorizer these flags ask for (reads the files), or {@link NgsildAuthorizer#ALLOW_ALL}. */
    NgsildAuthorizer authorizer() {
        if (!enabled()) {
            return NgsildAuthorizer.ALLOW_ALL;
        }
        Map<String, Grant> grants = tokens == null ? Map.of() : TokenFile.read(Path.of(tokens));
        JwtVerifier jwt = jwtKey == null ? null : new JwtVerifier(JwtVerifier.readKeys(Path.of(jwtKey)), jwtIssuer,
                jwtAudience, tenantsClaim, new VerifiedTokens(CACHE_ENTRIES, CACHE_BYTES));
        return new BearerAuthorizer(grants, jwt);
    }

    /** The {@code cor://} secret: the first line of {@code --corSecret}'s file, or {@code null}. */
    String corSecretValue() {
        if (corSecret == null) {
            return null;
        }
        String s;
        try {
            s = Files.readString(Path.of(corSecret), StandardCharsets.UTF_8).lines().findFirst().orElse("").strip();
        } catch (IOException e) {
            throw new IllegalArgumentException("--corSecret: cannot read " + corSecret + ": " + e.getMessage(), e);
        }
        int n = s.getBytes(StandardCharsets.UTF_8).length;
        if (n < 16 || n > 255) {
            throw new IllegalArgumentException("--corSecret " + corSecret + ": the secret takes 16 to 255 bytes, not " + n);
        }
        return s;
    }
}
