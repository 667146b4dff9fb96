package dev.cor.rest.client;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;

import dev.cor.rest.CorRestHeaders;

/**
 * One request for {@link CorRestClient}: method, absolute URL ({@code http://host:port/path?query}
 * or {@code https://...}), header fields and body bytes. The URL is checked when the request is
 * built, so a bad one fails at the caller, not inside a send. Immutable once built: any thread may
 * send it, as often as it likes.
 */
public final class CorRestClientRequest {
    private static final byte[] EMPTY = new byte[0];

    private final String method;
    private final String url;
    private final CorRestHeaders headers;
    private final byte[] body;
    private final long timeoutMs;

    // The URL taken apart once; the transport reads these.
    final String scheme;
    final String host;
    final int port;
    final String target;
    final boolean ipv6Literal;

    private CorRestClientRequest(Builder b) {
        this.method = b.method;
        this.url = b.url;
        this.headers = b.headers;
        this.body = b.body;
        this.timeoutMs = b.timeoutMs;
        Url u = Url.parse(b.url);
        this.scheme = u.scheme;
        this.host = u.host;
        this.port = u.port;
        this.target = u.target;
        this.ipv6Literal = u.ipv6;
    }

    /** A GET of {@code url}. */
    public static CorRestClientRequest get(String url) {
        return builder("GET", url).build();
    }

    /** A HEAD of {@code url}: the response has no body. */
    public static CorRestClientRequest head(String url) {
        return builder("HEAD", url).build();
    }

    /** A DELETE of {@code url}. */
    public static CorRestClientRequest delete(String url) {
        return builder("DELETE", url).build();
    }

    /** A POST of {@code body}, of type {@code contentType} (may be {@code null}). */
    public static CorRestClientRequest post(String url, String contentType, byte[] body) {
        return withBody("POST", url, contentType, body);
    }

    /** A PUT of {@code body}, of type {@code contentType} (may be {@code null}). */
    public static CorRestClientRequest put(String url, String contentType, byte[] body) {
        return withBody("PUT", url, contentType, body);
    }

    /** A PATCH of {@code body}, of type {@code contentType} (may be {@code null}). */
    public static CorRestClientRequest patch(String url, String contentType, byte[] body) {
        return withBody("PATCH", url, contentType, body);
    }

    private static CorRestClientRequest withBody(String method, String url, String contentType, byte[] body) {
        Builder b = builder(method, url).body(body);
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        return b.build();
    }

    /** A request of any method, with header fields and a body to add. */
    public static Builder builder(String method, String url) {
        return new Builder(method, url);
    }

    public String method() {
        return method;
    }

    public String url() {
        return url;
    }

    /** The header fields the caller set (the client adds Host and Content-Length). Do not modify. */
    public CorRestHeaders headers() {
        return headers;
    }

    /** The body; do not modify. */
    public byte[] body() {
        return body;
    }

    /**
     * This request's own deadline (ms) for the connect and for the whole response, or 0 for the
     * client's: a forward to a context source is bounded by its registration's timeout.
     */
    public long timeoutMs() {
        return timeoutMs;
    }

    /** The deadline of the response: this request's own, or else {@code clientDefault}. */
    long responseTimeoutMs(long clientDefault) {
        return timeoutMs > 0 ? timeoutMs : clientDefault;
    }

    /** The deadline of a connect: the client's, shortened to this request's own if that is shorter. */
    long connectTimeoutMs(long clientDefault) {
        return timeoutMs > 0 ? Math.min(timeoutMs, clientDefault) : clientDefault;
    }

    /** The URL's scheme, lower case: what picks the transport. */
    public String scheme() {
        return scheme;
    }

    /** Whether a retry cannot do what the first try did not (RFC 9110 § 9.2.2). */
    boolean idempotent() {
        return switch (method) {
            case "GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE" -> true;
            default -> false;
        };
    }

    @Override
    public String toString() {
        return method + " " + url;
    }

    /** Builds a {@link CorRestClientRequest}. Not thread-safe; one builder, one caller. */
    public static final class Builder {
        private final String method;
        private final String url;
        private final CorRestHeaders headers = new CorRestHeaders();
        private byte[] body = EMPTY;
        private long timeoutMs;

        private Builder(String method, String url) {
            this.method = Objects.requireNonNull(method, "method");
            this.url = Objects.requireNonNull(url, "url");
            if (method.isEmpty() || !Http1.isToken(method)) {
                throw new IllegalArgumentException("not an HTTP method: '" + method + "'");
            }
        }

        /** Adds a header field. Host, Content-Length and Transfer-Encoding are the client's to set. */
        public Builder header(String name, String value) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
            if (name.isEmpty() || !Http1.isToken(name)) {
                throw new IllegalArgumentException("not a header field name: '" + name + "'");
            }
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                // a CR or LF would let the value smuggle a field or a request of its own
                if (c == '\r' || c == '\n' || c == 0) {
                    throw new IllegalArgumentException("header field " + name + " has a CR, LF or NUL in its value");
                }
            }
            headers.add(name, value);
            return this;
        }

        public Builder body(byte[] body) {
            this.body = body != null ? body : EMPTY;
            return this;
        }

        /** A deadline of this request's own (ms, at least 1) instead of the client's, for the connect and the response. */
        public Builder timeoutMs(long ms) {
            if (ms < 1) {
                throw new IllegalArgumentException("timeoutMs must be >= 1: " + ms);
            }
            this.timeoutMs = ms;
            return this;
        }

        public Builder body(String utf8) {
            return body(utf8.getBytes(StandardCharsets.UTF_8));
        }

        /**
         * @throws IllegalArgumentException if the URL is not an absolute {@code scheme://host[:port][/path][?query]}
         */
        public CorRestClientRequest build() {
            return new CorRestClientRequest(this);
        }
    }

    /** An absolute URL taken apart, with no lookup of any kind. */
    private record Url(String scheme, String host, int port, String target, boolean ipv6) {
        static Url parse(String url) {
            int colon = url.indexOf("://");
            if (colon <= 0) {
                throw bad(url, "no scheme://");
            }
            String scheme = url.substring(0, colon).toLowerCase(Locale.ROOT);
            for (int i = 0; i < scheme.length(); i++) {
                char c = scheme.charAt(i);
                if (!(c >= 'a' && c <= 'z') && !(i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'))) {
                    throw bad(url, "bad scheme");
                }
            }
            int authStart = colon + 3;
            int authEnd = authStart;
            while (authEnd < url.length() && "/?#".indexOf(url.charAt(authEnd)) < 0) {
                authEnd++;
            }
            String authority = url.substring(authStart, authEnd);
            if (authority.indexOf('@') >= 0) {
                throw bad(url, "user information in the URL is not supported");
            }
            String host;
            String portText = null;
            boolean ipv6 = false;
            if (authority.startsWith("[")) {
                int close = authority.indexOf(']');
                if (close < 0) {
                    throw bad(url, "unclosed [ of an IPv6 address");
                }
                host = authority.substring(1, close);
                ipv6 = true;
                if (close + 1 < authority.length()) {
                    if (authority.charAt(close + 1) != ':') {
                        throw bad(url, "junk after the IPv6 address");
                    }
                    portText = authority.substring(close + 2);
                }
            } else {
                int pc = authority.lastIndexOf(':');
                host = pc >= 0 ? authority.substring(0, pc) : authority;
                portText = pc >= 0 ? authority.substring(pc + 1) : null;
            }
            if (host.isEmpty()) {
                throw bad(url, "no host");
            }
            for (int i = 0; i < host.length(); i++) {
                char c = host.charAt(i);
                boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                        || c == '-' || c == '.' || c == '_' || (ipv6 && (c == ':' || c == '%'));
                if (!ok) {
                    throw bad(url, "bad character in the host");
                }
            }
            int port = -1;
            if (portText != null) {
                if (portText.isEmpty() || portText.length() > 5) {
                    throw bad(url, "bad port");
                }
                port = 0;
                for (int i = 0; i < portText.length(); i++) {
                    char c = portText.charAt(i);
                    if (c < '0' || c > '9') {
                        throw bad(url, "bad port");
                    }
                    port = port * 10 + (c - '0');
                }
                if (port < 1 || port > 65535) {
                    throw bad(url, "port out of range");
                }
            }
            int hash = url.indexOf('#', authEnd);
            String target = url.substring(authEnd, hash >= 0 ? hash : url.length());
            if (target.isEmpty()) {
                target = "/";
            } else if (target.charAt(0) == '?') {
                target = "/" + target;
            }
            for (int i = 0; i < target.length(); i++) {
                char c = target.charAt(i);
                if (c <= ' ' || c >= 0x7f) {
                    throw bad(url, "a space, control or non-ASCII character in the path or query (percent-encode it)");
                }
            }
            return new Url(scheme, host.toLowerCase(Locale.ROOT), port, target, ipv6);
        }

        private static IllegalArgumentException bad(String url, String why) {
            return new IllegalArgumentException("not an absolute URL (" + why + "): " + url);
        }
    }
}
