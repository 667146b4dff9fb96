package dev.cor.bench.cli;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * A URL given on a command line, split into what a socket needs: scheme, host, port and the
 * request target (path and query, {@code /} when empty). Only absolute URLs with a host are
 * accepted; the port defaults to 80 for {@code http}. Parsed by the tools' mains; immutable.
 *
 * @param scheme        lower-case scheme ({@code http}, {@code cor})
 * @param host          the host as written (an IPv6 literal without brackets)
 * @param port          1 to 65535
 * @param requestTarget path and query as written, starting with {@code /}
 */
public record Endpoint(String scheme, String host, int port, String requestTarget) {

    /** Parses {@code url}; {@code what} names the flag in error messages. */
    public static Endpoint parse(String url, String what) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new Flags.FlagException(what + ": not a URL: " + url + " (" + e.getReason() + ")");
        }
        if (uri.getScheme() == null || uri.getHost() == null) {
            throw new Flags.FlagException(what + ": needs scheme://host:port, not " + url);
        }
        if (uri.getUserInfo() != null || uri.getFragment() != null) {
            throw new Flags.FlagException(what + ": user info and fragments are not supported: " + url);
        }
        String scheme = uri.getScheme().toLowerCase(Locale.ROOT);
        int port = uri.getPort();
        if (port == -1) {
            if (!scheme.equals("http")) {
                throw new Flags.FlagException(what + ": a " + scheme + ":// URL needs a port: " + url);
            }
            port = 80;
        }
        if (port < 1 || port > 65535) {
            throw new Flags.FlagException(what + ": port out of range: " + url);
        }
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        String target = uri.getRawQuery() == null ? path : path + "?" + uri.getRawQuery();
        String host = uri.getHost();
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new Endpoint(scheme, host, port, target);
    }

    /** {@code host:port}, bracketing an IPv6 literal: what a Host header carries. */
    public String authority() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }

    @Override
    public String toString() {
        return scheme + "://" + authority() + requestTarget;
    }
}
