package dev.cor.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The static bearer tokens of {@code --tokens FILE}, read once at start. One token a line:
 * <pre>
 * # TOKEN                              TENANTS          ACCESS
 * 9c1f0e7a5b2d4c88a1e3f60b7d2c9e41     *                rw
 * 3d7a0c5e9b1f4a26c8e2d04f6a9b3c75     -,city1,city2    ro
 * </pre>
 * separated by spaces or tabs: the token (RFC 6750's token characters, 16 to 4096 of them), the
 * tenants it may use (comma-separated; {@code *} every tenant, {@code -} the default one) and
 * {@code ro} (reads only) or {@code rw}. Blank lines and lines starting with {@code #} are
 * skipped. A malformed line, or a token given twice, stops the start with its line number (never
 * with the token). Main thread.
 */
final class TokenFile {
    /** RFC 6750 § 2.1's b64token. */
    static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9\\-._~+/]+=*");
    static final int MIN_TOKEN = 16;
    static final int MAX_TOKEN = 4096;

    private TokenFile() {
    }

    /** The grants of the file's tokens, by token. */
    static Map<String, Grant> read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("--tokens: cannot read " + file + ": " + e.getMessage(), e);
        }
        Map<String, Grant> grants = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = "--tokens " + file + " line " + (i + 1);
            String[] f = line.split("[ \\t]+");
            if (f.length != 3) {
                throw new IllegalArgumentException(where + ": takes TOKEN TENANTS ACCESS (3 fields), not " + f.length);
            }
            if (f[0].length() < MIN_TOKEN || f[0].length() > MAX_TOKEN || !TOKEN.matcher(f[0]).matches()) {
                throw new IllegalArgumentException(where + ": the token takes " + MIN_TOKEN + " to " + MAX_TOKEN
                        + " of the characters A-Z a-z 0-9 - . _ ~ + / (then =)");
            }
            List<String> tenants = Arrays.asList(f[1].split(","));
            if (tenants.stream().anyMatch(t -> t.isEmpty() || t.length() > 256)) {
                throw new IllegalArgumentException(where + ": the tenants are names separated by commas (* every tenant, - the default one)");
            }
            boolean write = switch (f[2]) {
                case "rw" -> true;
                case "ro" -> false;
                default -> throw new IllegalArgumentException(where + ": the access is ro or rw, not " + f[2]);
            };
            if (grants.put(f[0], Grant.of("the token of line " + (i + 1), tenants, write)) != null) {
                throw new IllegalArgumentException(where + ": this token is given twice");
            }
        }
        if (grants.isEmpty()) {
            throw new IllegalArgumentException("--tokens " + file + " holds no token");
        }
        return Map.copyOf(grants);
    }
}
