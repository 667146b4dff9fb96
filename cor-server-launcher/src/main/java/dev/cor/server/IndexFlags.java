package dev.cor.server;

import java.util.LinkedHashSet;
import java.util.Set;

import dev.cor.ngsild.CorNgsild;
import dev.cor.ngsild.store.ValueIndexSettings;

/**
 * The value indexes' flags: {@code --valueIndex NAMES} (attributes indexed from the start, in
 * every tenant), {@code --valueIndexAuto N} (an attribute a query needs gets an index once N
 * entities hold it; 0: never) and {@code --valueIndexMaxBytes SIZE} (the heap they may take
 * together). Parsed with the other flags on the main thread.
 *
 * @param declared      the attributes as given (terms of the core context, or IRIs)
 * @param autoThreshold see {@link ValueIndexSettings#autoThreshold()}
 * @param maxBytes      see {@link ValueIndexSettings#maxBytes()}
 */
record IndexFlags(Set<String> declared, int autoThreshold, long maxBytes) {
    static final IndexFlags DEFAULT = new IndexFlags(Set.of(), ValueIndexSettings.DEFAULT_AUTO_THRESHOLD,
            ValueIndexSettings.DEFAULT_MAX_BYTES);
    static final int MAX_DECLARED = 256;

    /** The flags' lines of {@code --help}, indented as the others. */
    static final String USAGE = """
              --valueIndex NAMES  attributes whose values are indexed from the start, comma-separated
                                  terms (as a request without @context names them) or IRIs
              --valueIndexAuto N  an attribute a selective q needs gets a value index, built in the
                                  background, once N entities hold it; 0: never (default 2000)
              --valueIndexMaxBytes SIZE  the heap all value indexes may take, e.g. 512m (default 256m);
                                  an index that would pass it is dropped and its queries scan""".indent(2);

    static boolean takes(String flag) {
        return flag.equals("--valueIndex") || flag.equals("--valueIndexAuto") || flag.equals("--valueIndexMaxBytes");
    }

    IndexFlags with(String flag, String value) {
        return switch (flag) {
            case "--valueIndex" -> new IndexFlags(names(flag, value), autoThreshold, maxBytes);
            case "--valueIndexAuto" -> new IndexFlags(declared, threshold(flag, value), maxBytes);
            case "--valueIndexMaxBytes" -> new IndexFlags(declared, autoThreshold,
                    ServerOptions.bytes(flag, value, 0, TemporalFlags.MAX_BYTES));
            default -> throw new IllegalArgumentException(flag);
        };
    }

    private static Set<String> names(String flag, String value) {
        Set<String> out = new LinkedHashSet<>();
        for (String n : value.split(",", -1)) {
            String t = n.trim();
            if (t.isEmpty() || t.length() > 512 || !t.chars().allMatch(c -> c > 0x20 && c < 0x7F)) {
                throw new IllegalArgumentException(flag + " takes comma-separated attribute names, not '" + value + "'");
            }
            out.add(t);
        }
        if (out.size() > MAX_DECLARED) {
            throw new IllegalArgumentException(flag + " takes at most " + MAX_DECLARED + " names");
        }
        return Set.copyOf(out);
    }

    private static int threshold(String flag, String v) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 0 && n <= 100_000_000) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(flag + " takes a number of entities from 0 to 100000000, not " + v);
    }

    /** The store's settings, each name expanded as a request without {@code @context} would. */
    ValueIndexSettings settings() {
        Set<String> iris = new LinkedHashSet<>();
        for (String n : declared) {
            String iri = CorNgsild.expandName(n);
            if (iri == null) {
                throw new IllegalArgumentException("--valueIndex: '" + n + "' stands for no attribute");
            }
            iris.add(iri);
        }
        return new ValueIndexSettings(iris, autoThreshold, maxBytes);
    }
}
