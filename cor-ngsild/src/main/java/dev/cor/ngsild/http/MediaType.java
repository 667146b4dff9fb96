package dev.cor.ngsild.http;

import java.util.List;
import java.util.Locale;

/**
 * The media types of the binding (ETSI GS CIM 009 § 6.3.4): what a body may be sent as, and
 * what an answer may be asked for with {@code Accept} - chosen by the weights of RFC 9110
 * § 12.5.1, ties going to the order of the specification's list (json, ld+json, geo+json).
 */
enum MediaType {
    JSON("application/json"),
    LD_JSON("application/ld+json"),
    GEO_JSON("application/geo+json"),
    MERGE_PATCH("application/merge-patch+json");

    private final String name;

    MediaType(String name) {
        this.name = name;
    }

    String mediaType() {
        return name;
    }

    /** The answers most operations can give. */
    static final List<MediaType> JSON_OR_LD = List.of(JSON, LD_JSON);
    /** The answers of retrieve and query (GeoJSON too). */
    static final List<MediaType> ENTITY_ANSWERS = List.of(JSON, LD_JSON, GEO_JSON);

    /** The type of a {@code Content-Type} field (parameters aside), or {@code null} if it is none of these. */
    static MediaType ofContentType(String contentType) {
        if (contentType == null) {
            return null;
        }
        int semi = contentType.indexOf(';');
        String mt = (semi >= 0 ? contentType.substring(0, semi) : contentType).trim().toLowerCase(Locale.ROOT);
        for (MediaType m : values()) {
            if (m.name.equals(mt)) {
                return m;
            }
        }
        return null;
    }

    /**
     * The answer's type for an {@code Accept} field: {@code JSON} when there is none; otherwise the
     * offered type with the highest weight, the most specific range deciding a type's weight; ties
     * in the order of {@code offered}; {@code null} when none is acceptable (406).
     */
    static MediaType negotiate(String accept, List<MediaType> offered) {
        if (accept == null || accept.isBlank()) {
            return JSON;
        }
        MediaType best = null;
        double bestQ = 0;
        for (MediaType m : offered) {
            double q = weight(accept, m.name);
            if (q > bestQ) {
                best = m;
                bestQ = q;
            }
        }
        return best;
    }

    /** The weight {@code accept} gives {@code type}: that of its most specific matching range; 0 if none. */
    private static double weight(String accept, String type) {
        int slash = type.indexOf('/');
        String main = type.substring(0, slash);
        int bestSpecificity = -1;
        double q = 0;
        for (String range : accept.split(",")) {
            String[] parts = range.split(";");
            String r = parts[0].trim().toLowerCase(Locale.ROOT);
            int specificity;
            if (r.equals(type)) {
                specificity = 2;
            } else if (r.equals(main + "/*")) {
                specificity = 1;
            } else if (r.equals("*/*") || r.equals("*")) {
                specificity = 0;
            } else {
                continue;
            }
            if (specificity <= bestSpecificity) {
                continue;
            }
            double w = 1;
            for (int i = 1; i < parts.length; i++) {
                String p = parts[i].trim();
                if (p.startsWith("q=") || p.startsWith("Q=")) {
                    try {
                        w = Double.parseDouble(p.substring(2).trim());
                    } catch (NumberFormatException e) {
                        w = 1; // a weight that does not parse weighs nothing less (RFC 9110 § 12.4.2 leaves it open)
                    }
                }
            }
            bestSpecificity = specificity;
            q = w;
        }
        return q;
    }
}
