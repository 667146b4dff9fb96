package dev.cor.ngsild.ld;

import java.net.URI;
import java.util.Set;

/**
 * The lexical rules JSON-LD 1.1 applies to keys and IRIs: keywords, the keyword form, absolute
 * IRIs, gen-delims, blank node identifiers, and the resolution of a relative reference. Stateless.
 */
final class Iris {
    /** The JSON-LD 1.1 keywords (Syntax § 1.7). */
    static final Set<String> KEYWORDS = Set.of("@base", "@container", "@context", "@direction", "@graph", "@id",
            "@import", "@included", "@index", "@json", "@language", "@list", "@nest", "@none", "@prefix",
            "@propagate", "@protected", "@reverse", "@set", "@type", "@value", "@version", "@vocab");

    private Iris() {
    }

    static boolean isKeyword(String s) {
        return s != null && s.length() > 1 && s.charAt(0) == '@' && KEYWORDS.contains(s);
    }

    /** Whether {@code s} has the form of a keyword: {@code "@" 1*ALPHA} (RFC 5234). */
    static boolean hasKeywordForm(String s) {
        int n = s.length();
        if (n < 2 || s.charAt(0) != '@') {
            return false;
        }
        for (int i = 1; i < n; i++) {
            char c = s.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
                return false;
            }
        }
        return true;
    }

    static boolean isBlankNode(String s) {
        return s.startsWith("_:");
    }

    /**
     * Whether {@code s} has the form of an absolute IRI (RFC 3987): a scheme, a colon, and the
     * rest as {@link URI} parses it - which refuses an empty rest ({@code "ex:"}), an IRI all the
     * same ({@code ihier-part} may be an empty path). Only processing and the first expansion of
     * an unknown term come here; the hot path never does.
     */
    static boolean isAbsoluteIri(String s) {
        if (s == null || s.length() < 2) {
            return false;
        }
        int colon = s.indexOf(':');
        if (colon < 1 || !isScheme(s, colon)) {
            return false;
        }
        if (colon == s.length() - 1) {
            return true;
        }
        try {
            return URI.create(s).isAbsolute();
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static boolean isScheme(String s, int end) {
        char c0 = s.charAt(0);
        if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z'))) {
            return false;
        }
        for (int i = 1; i < end; i++) {
            char c = s.charAt(i);
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')) {
                return false;
            }
        }
        return true;
    }

    /** RFC 3986 § 2.2 gen-delims: {@code : / ? # [ ] @}. */
    static boolean endsWithGenDelim(String s) {
        if (s.isEmpty()) {
            return false;
        }
        char c = s.charAt(s.length() - 1);
        return c == ':' || c == '/' || c == '?' || c == '#' || c == '[' || c == ']' || c == '@';
    }

    /**
     * {@code ref} resolved against {@code base} (RFC 3986 § 5.2); {@code ref} itself when it is
     * absolute or there is no base; {@code null} when either does not parse.
     */
    static String resolve(String base, String ref) {
        try {
            URI r = URI.create(ref);
            if (r.isAbsolute() || base == null) {
                return ref;
            }
            URI b = URI.create(base);
            if (b.getRawAuthority() != null && (b.getRawPath() == null || b.getRawPath().isEmpty())) {
                // RFC 3986 § 5.2.3: an empty base path with an authority merges as "/"; java.net.URI does not
                b = URI.create(base + "/");
            }
            return b.resolve(r).toString();
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
