package dev.cor.server;

import java.util.Map;

import dev.cor.ngsild.policy.NgsildAuthorizer;

/**
 * The launcher's authorizer: a request carries {@code Authorization: Bearer TOKEN}, where TOKEN
 * is one of {@code --tokens}' static tokens or a JWT {@code --jwtKey} verifies; its grant decides
 * the tenant and the operation. No credential or an invalid one: 401 with a {@code Bearer}
 * challenge (RFC 6750 § 3); a valid one that does not cover the request: 403. Shared by every
 * loop; decides inline (a static token is a map look-up, a JWT one once verified).
 */
final class BearerAuthorizer implements NgsildAuthorizer {
    static final String REALM = "cor";
    private static final String CHALLENGE = "Bearer realm=\"" + REALM + "\"";
    private static final String INVALID = CHALLENGE + ", error=\"invalid_token\"";

    private final Map<String, Grant> tokens;
    private final JwtVerifier jwt;

    /** {@code tokens}: the static ones (may be empty); {@code jwt}: or {@code null} without {@code --jwtKey}. */
    BearerAuthorizer(Map<String, Grant> tokens, JwtVerifier jwt) {
        this.tokens = Map.copyOf(tokens);
        this.jwt = jwt;
    }

    @Override
    public Decision authorize(Request request) {
        String h = request.headers().get("Authorization");
        if (h == null) {
            return Decision.unauthorized(CHALLENGE, "this broker takes requests with a bearer token (Authorization: Bearer ...)");
        }
        if (h.length() < 7 || !h.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Decision.unauthorized(CHALLENGE, "this broker takes bearer tokens only (Authorization: Bearer ...)");
        }
        String token = h.substring(7).strip();
        Grant grant = tokens.get(token);
        if (grant == null) {
            if (jwt == null || !JwtVerifier.looksLikeJwt(token)) {
                return Decision.unauthorized(INVALID, "the bearer token is not one this broker knows");
            }
            JwtVerifier.Outcome o = jwt.verify(token, System.currentTimeMillis());
            if (o.grant() == null) {
                return Decision.unauthorized(INVALID, o.refusal());
            }
            grant = o.grant();
        }
        return grant.decide(request.tenant(), request.read());
    }
}
