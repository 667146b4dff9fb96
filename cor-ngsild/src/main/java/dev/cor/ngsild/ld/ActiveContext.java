package dev.cor.ngsild.ld;

import java.util.HashMap;

/**
 * An active context while {@link ContextProcessor} builds it (JSON-LD 1.1 Processing Algorithms
 * § 4.1): term definitions, base IRI, vocabulary mapping, default language and direction. Mutable
 * and owned by one processing run; {@link CompiledContext} is its frozen form.
 */
final class ActiveContext {
    final HashMap<String, TermDefinition> terms;
    String base;
    String originalBase;
    String vocab;
    String defaultLanguage;
    String defaultDirection;

    ActiveContext(String base) {
        this.terms = new HashMap<>();
        this.base = base;
        this.originalBase = base;
    }

    private ActiveContext(ActiveContext o) {
        this.terms = new HashMap<>(o.terms);
        this.base = o.base;
        this.originalBase = o.originalBase;
        this.vocab = o.vocab;
        this.defaultLanguage = o.defaultLanguage;
        this.defaultDirection = o.defaultDirection;
    }

    ActiveContext copy() {
        return new ActiveContext(this);
    }

    boolean hasProtectedTerm() {
        for (TermDefinition d : terms.values()) {
            if (d.protect) {
                return true;
            }
        }
        return false;
    }
}
