package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The README's flag table and {@code --help} ({@link ServerOptions#USAGE}) name the same flags:
 * a flag added to one and not the other fails the build, so the two cannot drift apart.
 */
class ReadmeFlagTableTest {
    /** A flag line of the usage: two spaces, then the flag. */
    private static final Pattern USAGE_FLAG = Pattern.compile("(?m)^ {2}(--[A-Za-z][A-Za-z-]*)");
    /** A row of the README's flag table: its first cell starts with the flag in backquotes. */
    private static final Pattern TABLE_FLAG = Pattern.compile("(?m)^\\| `(--[A-Za-z][A-Za-z-]*)[ `]");

    @Test
    void the_readme_flag_table_lists_exactly_the_flags_help_prints() throws Exception {
        Set<String> usage = flags(USAGE_FLAG, ServerOptions.USAGE);
        Set<String> table = flags(TABLE_FLAG, Files.readString(readme()));
        assertTrue(usage.size() > 30, "the usage's flags were found: " + usage);
        Set<String> missing = new TreeSet<>(usage);
        missing.removeAll(table);
        Set<String> extra = new TreeSet<>(table);
        extra.removeAll(usage);
        assertEquals("", (missing.isEmpty() ? "" : "not in the README's table: " + missing)
                + (extra.isEmpty() ? "" : " in the table but not in --help: " + extra));
    }

    private static Set<String> flags(Pattern p, String text) {
        Set<String> out = new TreeSet<>();
        Matcher m = p.matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** The README at the root of the checkout (the tests run in the module's directory). */
    private static Path readme() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path r = dir.resolve("README.md");
            if (Files.isRegularFile(r) && Files.isRegularFile(dir.resolve("cor-server-launcher/pom.xml"))) {
                return r;
            }
        }
        throw new AssertionError("no README.md above " + Path.of("").toAbsolutePath());
    }
}
