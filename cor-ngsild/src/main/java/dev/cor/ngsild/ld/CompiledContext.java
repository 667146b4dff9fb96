package dev.cor.ngsild.ld;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A processed active context, frozen: its term definitions, its vocabulary mapping and its
 * inverse context (JSON-LD 1.1 Processing Algorithms § 4.3), with the two operations the broker
 * needs of it. {@link #expand} is IRI Expansion with {@code vocab = true} (§ 5.2); {@link #compact}
 * is IRI Compaction with {@code vocab = true} (§ 6.2) for the two value shapes NGSI-LD names
 * have: an attribute instance (a node object with neither {@code @id} nor {@code @index}) and no
 * value at all (an entity type, a vocab value). Immutable and thread-safe; {@link LdContext} puts
 * its memo in front of it.
 */
final class CompiledContext {
    /**
     * How terms are ordered where JSON-LD 1.1 breaks ties: building the inverse context (§ 4.3.2
     * step 3) and choosing between compact IRIs (§ 6.2.2 step 7.3).
     */
    enum TermOrder {
        /** What the Recommendation says: the shortest term first, then the lexicographically least. */
        SHORTEST_FIRST(Comparator.comparingInt(String::length).thenComparing(Comparator.naturalOrder())),
        /**
         * What Titanium JSON-LD 1.6 does (plain {@code String} order in both places): only for the
         * oracle tests, which prove the rest of the algorithm against it.
         */
        LEXICOGRAPHIC(Comparator.naturalOrder());

        final Comparator<String> comparator;

        TermOrder(Comparator<String> comparator) {
            this.comparator = comparator;
        }
    }

    /** § 6.2.2 step 4, for a node object or no value: the containers to try, in order (processing mode 1.1). */
    private static final String[] CONTAINERS = {"@id", "@id@set", "@type", "@set@type", "@set", "@none", "@index", "@index@set"};
    /** § 6.2.2 steps 4.17 - 4.18 for the same values: the type mappings to try, in order. */
    private static final String[] PREFERRED = {"@id", "@none", "@any"};

    final Map<String, TermDefinition> terms;
    final String vocab;
    final String defaultLanguage;
    final String defaultDirection;
    private final TermOrder order;
    /**
     * iri → its compaction as an attribute name, and with no value, for every IRI some term maps
     * to: what the inverse context (§ 4.3) answers, computed once. The inverse context itself is
     * not kept - a handful of maps per term, several times the size of the terms - since every
     * look-up it could answer is here and any other IRI has no entry in it.
     */
    final Map<String, String> names;
    final Map<String, String> iris;
    /** The terms usable as a prefix in compaction (prefix flag set, an IRI mapping), with their IRIs. */
    private final String[][] prefixes;
    /** While it is built: the inverse context that {@link #selectTerm} reads; {@code null} after. */
    private Map<String, Map<String, Map<String, Map<String, String>>>> inverse;

    CompiledContext(ActiveContext active, TermOrder order) {
        this(active, order, null);
    }

    /**
     * @param base the core context compiled, which {@code active} ends with: its terms and
     *             compactions are shared, only those that differ kept here; {@code null} for the core
     */
    CompiledContext(ActiveContext active, TermOrder order, CompiledContext base) {
        Map<String, TermDefinition> all = Map.copyOf(active.terms);
        this.terms = base == null ? all : OverlayMap.over(base.terms, all, TermDefinition::sameExceptProtected);
        this.vocab = active.vocab;
        this.defaultLanguage = active.defaultLanguage;
        this.defaultDirection = active.defaultDirection;
        this.order = order;
        List<String> sorted = new ArrayList<>(terms.keySet());
        sorted.sort(order.comparator);
        List<String[]> p = new ArrayList<>();
        for (String name : sorted) {
            TermDefinition d = terms.get(name);
            if (d.prefix && d.iri != null) {
                p.add(new String[] {name, d.iri});
            }
        }
        this.prefixes = p.toArray(new String[0][]);
        this.inverse = inverse(sorted);
        Map<String, String> n = new HashMap<>();
        Map<String, String> i = new HashMap<>();
        for (String iri : inverse.keySet()) {
            n.put(iri, compact(iri, true));
            i.put(iri, compact(iri, false));
        }
        this.names = base == null ? n : OverlayMap.over(base.names, n, String::equals);
        this.iris = base == null ? i : OverlayMap.over(base.iris, i, String::equals);
        this.inverse = null;
    }

    /** Adds what it keeps to {@code size}: its object, its terms and their definitions, its compactions, its prefixes. */
    void addTo(RetainedSize size) {
        size.add(RetainedSize.object(7, 0));
        Map<String, TermDefinition> ownTerms = terms instanceof OverlayMap<TermDefinition> o ? o.own : terms;
        size.add(terms instanceof OverlayMap ? RetainedSize.object(3, 4) : 0);
        size.immutableMap(ownTerms.size()); // an overlay's own is a HashMap: about as much
        for (Map.Entry<String, TermDefinition> e : ownTerms.entrySet()) {
            size.string(e.getKey());
            size.termDefinition(e.getValue());
        }
        for (Map<String, String> m : List.of(names, iris)) {
            size.add(m instanceof OverlayMap ? RetainedSize.object(3, 4) : 0);
            size.hashMap(m instanceof OverlayMap<String> o ? o.own : m);
        }
        size.array(prefixes.length);
        for (int k = 0; k < prefixes.length; k++) {
            size.array(2);
        }
        size.string(vocab);
        size.string(defaultLanguage);
        size.string(defaultDirection);
    }

    // ---------------------------------------------------------------- expansion

    /**
     * § 5.2.2 with {@code vocab = true} and no local context: the IRI a term used as a property
     * name, a type or a {@code @vocab}-coerced value stands for; a keyword for a keyword or an
     * alias of one; {@code null} when it stands for nothing (a term defined as null, the form of a
     * keyword that is none).
     */
    String expand(String value) {
        if (Iris.isKeyword(value)) {
            return value;
        }
        if (Iris.hasKeywordForm(value)) {
            return null;
        }
        TermDefinition def = terms.get(value);
        if (def != null) {
            return def.iri;
        }
        int colon = value.indexOf(':', 1);
        if (colon > 0) {
            String p = value.substring(0, colon);
            String suffix = value.substring(colon + 1);
            if (p.equals("_") || suffix.startsWith("//")) {
                return value;
            }
            TermDefinition pd = terms.get(p);
            if (pd != null && pd.iri != null && pd.prefix) {
                return pd.iri + suffix;
            }
            if (Iris.isAbsoluteIri(value)) {
                return value;
            }
        }
        return vocab != null ? vocab + value : value;
    }

    // ---------------------------------------------------------------- compaction

    /**
     * § 6.2.2 with {@code vocab = true}: the term, compact IRI or IRI that {@code iri} is written
     * as, for an attribute instance ({@code nodeValue}) or for no value. Where the Recommendation
     * raises "IRI confused with prefix" (step 9) the IRI is given as it is: an answer must render,
     * and a full IRI is what § 5.5.7 asks for when nothing matches.
     */
    String compact(String iri, boolean nodeValue) {
        // 4.
        if (inverse == null) {
            // built: an IRI some term maps to is answered from names and iris, and no other has a term
            String known = (nodeValue ? names : iris).get(iri);
            if (known != null) {
                return known;
            }
        } else {
            String term = selectTerm(iri);
            if (term != null) {
                return term;
            }
        }
        // 5.
        if (vocab != null && iri.startsWith(vocab) && iri.length() > vocab.length()) {
            String suffix = iri.substring(vocab.length());
            if (!terms.containsKey(suffix)) {
                return suffix;
            }
        }
        // 6. - 8.
        String compactIri = null;
        for (String[] p : prefixes) {
            String prefixIri = p[1];
            if (iri.equals(prefixIri) || !iri.startsWith(prefixIri)) {
                continue;
            }
            String candidate = p[0] + ':' + iri.substring(prefixIri.length());
            TermDefinition existing = terms.get(candidate);
            boolean usable = existing == null || (!nodeValue && iri.equals(existing.iri));
            if (usable && (compactIri == null || order.comparator.compare(candidate, compactIri) < 0)) {
                compactIri = candidate;
            }
        }
        if (compactIri != null) {
            return compactIri;
        }
        // 9. - 11.
        return iri;
    }

    /** § 4.4 Term Selection for a node object without {@code @id} or {@code @index}, or for no value. */
    private String selectTerm(String iri) {
        Map<String, Map<String, Map<String, String>>> containerMap = inverse.get(iri);
        if (containerMap == null) {
            return null;
        }
        for (String container : CONTAINERS) {
            Map<String, Map<String, String>> typeLanguageMap = containerMap.get(container);
            if (typeLanguageMap == null) {
                continue;
            }
            Map<String, String> valueMap = typeLanguageMap.get("@type");
            for (String item : PREFERRED) {
                String term = valueMap.get(item);
                if (term != null) {
                    return term;
                }
            }
        }
        return null;
    }

    /** Whether some term maps to {@code iri} (it is in the inverse context). */
    boolean hasTermFor(String iri) {
        return names.containsKey(iri);
    }

    /** The IRIs that some term maps to. */
    Iterable<String> mappedIris() {
        return names.keySet();
    }

    /** § 4.3.2 Inverse Context Creation, over the terms in {@code names}' order. */
    private Map<String, Map<String, Map<String, Map<String, String>>>> inverse(List<String> names) {
        Map<String, Map<String, Map<String, Map<String, String>>>> result = new HashMap<>();
        String defLanguage = defaultLanguage != null ? defaultLanguage.toLowerCase(Locale.ROOT) : "@none";
        for (String term : names) {
            TermDefinition d = terms.get(term);
            if (d.iri == null) {
                continue;
            }
            String container = d.container != null ? d.container : "@none";
            Map<String, Map<String, Map<String, String>>> containerMap = result.computeIfAbsent(d.iri, k -> new HashMap<>());
            Map<String, Map<String, String>> typeLanguageMap = containerMap.get(container);
            if (typeLanguageMap == null) {
                typeLanguageMap = new HashMap<>();
                typeLanguageMap.put("@language", new HashMap<>());
                typeLanguageMap.put("@type", new HashMap<>());
                Map<String, String> any = new HashMap<>();
                any.put("@none", term);
                typeLanguageMap.put("@any", any);
                containerMap.put(container, typeLanguageMap);
            }
            Map<String, String> typeMap = typeLanguageMap.get("@type");
            Map<String, String> languageMap = typeLanguageMap.get("@language");
            if (d.reverse) {
                typeMap.putIfAbsent("@reverse", term);
            } else if ("@none".equals(d.typeMapping)) {
                languageMap.putIfAbsent("@any", term);
                typeMap.putIfAbsent("@any", term);
            } else if (d.typeMapping != null) {
                typeMap.putIfAbsent(d.typeMapping, term);
            } else if (d.hasLanguage && d.hasDirection) {
                String langDir;
                if (d.language != null && d.direction != null) {
                    langDir = (d.language + "_" + d.direction).toLowerCase(Locale.ROOT);
                } else if (d.language != null) {
                    langDir = d.language.toLowerCase(Locale.ROOT);
                } else if (d.direction != null) {
                    langDir = "_" + d.direction;
                } else {
                    langDir = "@null";
                }
                languageMap.putIfAbsent(langDir, term);
            } else if (d.hasLanguage) {
                languageMap.putIfAbsent(d.language == null ? "@null" : d.language.toLowerCase(Locale.ROOT), term);
            } else if (d.hasDirection) {
                languageMap.putIfAbsent(d.direction == null ? "@none" : "_" + d.direction, term);
            } else if (defaultDirection != null) {
                String langDir = ((defaultLanguage != null ? defaultLanguage : "") + "_" + defaultDirection).toLowerCase(Locale.ROOT);
                languageMap.putIfAbsent(langDir, term);
                languageMap.putIfAbsent("@none", term);
                typeMap.putIfAbsent("@none", term);
            } else {
                languageMap.putIfAbsent(defLanguage, term);
                languageMap.putIfAbsent("@none", term);
                typeMap.putIfAbsent("@none", term);
            }
        }
        return result;
    }
}
