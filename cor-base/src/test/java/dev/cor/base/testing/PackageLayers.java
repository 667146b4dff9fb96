package dev.cor.base.testing;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;

/**
 * The package graph of a module's compiled classes, as the JDK's {@code jdeps} reads it from the
 * bytecode, and the checks a module's layering test makes on it: every package named in a
 * bottom-up list of layers, and no package depending on one at its own layer or above (which also
 * rules out every cycle). Used by the tests of each module; reads only {@code target/classes}.
 */
public final class PackageLayers {
    private static final Pattern EDGE = Pattern.compile("^\\s+(\\S+)\\s+->\\s+(\\S+)\\s+.*$");

    private PackageLayers() {
    }

    /** The directory (or jar) {@code type} was loaded from: the module's compiled main classes. */
    public static Path classesOf(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Package to the packages it uses, for the packages under {@code prefix} (itself included) and
     * only edges between them; a package that uses none of the others maps to an empty set.
     */
    public static Map<String, Set<String>> graph(Path classes, String prefix) {
        if (!Files.exists(classes)) {
            throw new IllegalStateException("no compiled classes at " + classes);
        }
        ToolProvider jdeps = ToolProvider.findFirst("jdeps")
                .orElseThrow(() -> new IllegalStateException("this JDK has no jdeps"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:package", "-filter:none",
                classes.toString());
        if (rc != 0) {
            throw new IllegalStateException("jdeps failed (" + rc + "): " + err);
        }
        Map<String, Set<String>> graph = new TreeMap<>();
        for (String line : out.toString().split("\n")) {
            Matcher m = EDGE.matcher(line);
            if (!m.matches()) {
                continue;
            }
            String from = m.group(1);
            String to = m.group(2);
            if (!within(from, prefix)) {
                continue;
            }
            Set<String> uses = graph.computeIfAbsent(from, k -> new TreeSet<>());
            if (within(to, prefix) && !to.equals(from)) {
                uses.add(to);
            }
        }
        if (graph.isEmpty()) {
            throw new IllegalStateException("jdeps found no package under " + prefix + " in " + classes);
        }
        return graph;
    }

    /**
     * What breaks the layering {@code bottomUp} (packages, lowest first): a package of the graph
     * the list does not name, a package the list names that does not exist, and every edge from
     * a package to one that is not strictly below it. Empty when the layering holds.
     */
    public static List<String> violations(Map<String, Set<String>> graph, List<String> bottomUp) {
        List<String> found = new ArrayList<>();
        for (String p : graph.keySet()) {
            if (!bottomUp.contains(p)) {
                found.add(p + " is in no layer: place it in the list (and in doc/architecture.md)");
            }
        }
        for (String p : bottomUp) {
            if (!graph.containsKey(p)) {
                found.add(p + " is listed but has no classes");
            }
        }
        graph.forEach((from, uses) -> {
            int level = bottomUp.indexOf(from);
            for (String to : uses) {
                int target = bottomUp.indexOf(to);
                if (!to.equals(from) && level >= 0 && target >= level) {
                    found.add(from + " -> " + to + ": a package may use only the packages below it");
                }
            }
        });
        return found;
    }

    private static boolean within(String pkg, String prefix) {
        return pkg.equals(prefix) || pkg.startsWith(prefix + ".");
    }
}
