package dev.cor.ngsild.store.postgres;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * Where the database is, as an operator writes it ({@code --db}): libpq's URI form,
 * {@code postgresql://USER@HOST[:PORT]/DB[?sslmode=MODE]} ({@code postgres://} too). The password
 * is never part of it - a command line is read by anyone who can list processes - and a URI that
 * carries one is refused without repeating it; it comes from {@code COR_DB_PASSWORD} or a file.
 * Immutable.
 *
 * @param user     the role
 * @param host     the host: a name, an IPv4 or an IPv6 address (without brackets)
 * @param port     the port (5432 by default)
 * @param database the database
 * @param sslmode  libpq's {@code sslmode}, or {@code null} (pgjdbc's default, {@code prefer})
 */
record PgAddress(String user, String host, int port, String database, String sslmode) {
    private static final Set<String> SSL_MODES = Set.of("disable", "allow", "prefer", "require", "verify-ca", "verify-full");

    /**
     * Reads {@code uri}.
     *
     * @throws IllegalArgumentException naming what is wrong (never the password)
     */
    public static PgAddress parse(String uri) {
        if (uri == null || !(uri.startsWith("postgresql://") || uri.startsWith("postgres://"))) {
            throw new IllegalArgumentException("--db: a postgresql://USER@HOST:PORT/DB URI is expected");
        }
        URI u;
        try {
            u = new URI(uri);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("--db: not a URI (" + e.getReason() + ")");
        }
        String host = u.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("--db: the host is missing (postgresql://USER@HOST:PORT/DB)");
        }
        String info = u.getRawUserInfo();
        if (info == null || info.isEmpty()) {
            throw new IllegalArgumentException("--db: the user is missing (postgresql://USER@HOST:PORT/DB)");
        }
        if (info.contains(":")) {
            throw new IllegalArgumentException("--db: a password does not go on the command line: give it in COR_DB_PASSWORD "
                    + "or --dbPasswordFile");
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        String path = u.getRawPath();
        if (path == null || path.length() < 2 || path.indexOf('/', 1) >= 0) {
            throw new IllegalArgumentException("--db: the database is missing (postgresql://USER@HOST:PORT/DB)");
        }
        String sslmode = null;
        if (u.getRawQuery() != null) {
            for (String pair : u.getRawQuery().split("&")) {
                int eq = pair.indexOf('=');
                String name = eq < 0 ? pair : pair.substring(0, eq);
                String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
                if (!name.equals("sslmode") || !SSL_MODES.contains(value)) {
                    throw new IllegalArgumentException("--db: the only parameter taken is sslmode (" + String.join(", ",
                            new java.util.TreeSet<>(SSL_MODES)) + ")");
                }
                sslmode = value;
            }
        }
        int port = u.getPort() < 0 ? 5432 : u.getPort();
        return new PgAddress(decode(info), host, port, decode(path.substring(1)), sslmode);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /**
     * The JDBC URL of this address, its host replaced by {@code resolvedHost} (an address literal,
     * resolved once where a wait is allowed: pgjdbc resolves a name on the connecting thread, which
     * would be a loop).
     */
    public String jdbcUrl(String resolvedHost) {
        String h = resolvedHost.contains(":") ? "[" + resolvedHost + "]" : resolvedHost;
        String url = "jdbc:postgresql://" + h + ":" + port + "/" + java.net.URLEncoder.encode(database, StandardCharsets.UTF_8);
        return sslmode == null ? url : url + "?sslmode=" + sslmode;
    }

    /** As the operator wrote it, without a password (there is none): for logs. */
    @Override
    public String toString() {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return "postgresql://" + user + "@" + h + ":" + port + "/" + database + (sslmode == null ? "" : "?sslmode=" + sslmode);
    }
}
