package dev.cor.ngsild.ld;

import java.util.Objects;

/**
 * One term definition of an active context (JSON-LD 1.1 Processing Algorithms § 4.1): what a
 * term maps to and how its values are coerced. Immutable once {@link ContextProcessor} has built
 * it; shared by every {@link ActiveContext} that holds it.
 * <p>
 * The container mapping is kept as the concatenation of its values in lexicographical order
 * (§ 4.3.2 step 3.3), which is both the inverse context's key and a form in which two
 * definitions compare as sets.
 */
final class TermDefinition {
    /** The IRI mapping: an IRI, a blank node identifier or a keyword; {@code null} for a term defined as null. */
    final String iri;
    final boolean prefix;
    final boolean protect;
    final boolean reverse;
    /** An IRI, {@code @id}, {@code @vocab}, {@code @json} or {@code @none}; {@code null} when there is none. */
    final String typeMapping;
    /** The container mapping as its sorted concatenation ({@code "@index@set"}); {@code null} when there is none. */
    final String container;
    /** Whether a language mapping was given (its value may be null). */
    final boolean hasLanguage;
    final String language;
    /** Whether a direction mapping was given (its value may be null). */
    final boolean hasDirection;
    final String direction;
    final String index;
    final String nest;

    TermDefinition(String iri, boolean prefix, boolean protect, boolean reverse, String typeMapping, String container,
            boolean hasLanguage, String language, boolean hasDirection, String direction, String index, String nest) {
        this.iri = iri;
        this.prefix = prefix;
        this.protect = protect;
        this.reverse = reverse;
        this.typeMapping = typeMapping;
        this.container = container;
        this.hasLanguage = hasLanguage;
        this.language = language;
        this.hasDirection = hasDirection;
        this.direction = direction;
        this.index = index;
        this.nest = nest;
    }

    boolean hasContainer(String keyword) {
        return container != null && container.contains(keyword);
    }

    /** § 4.2.2 step 27.1: the same definition, the protected flag aside. */
    boolean sameExceptProtected(TermDefinition o) {
        return Objects.equals(iri, o.iri) && prefix == o.prefix && reverse == o.reverse
                && Objects.equals(typeMapping, o.typeMapping) && Objects.equals(container, o.container)
                && hasLanguage == o.hasLanguage && Objects.equals(language, o.language)
                && hasDirection == o.hasDirection && Objects.equals(direction, o.direction)
                && Objects.equals(index, o.index) && Objects.equals(nest, o.nest);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("{@id=").append(iri);
        if (typeMapping != null) {
            b.append(", @type=").append(typeMapping);
        }
        if (container != null) {
            b.append(", @container=").append(container);
        }
        if (hasLanguage) {
            b.append(", @language=").append(language);
        }
        if (hasDirection) {
            b.append(", @direction=").append(direction);
        }
        if (prefix) {
            b.append(", prefix");
        }
        if (protect) {
            b.append(", protected");
        }
        if (reverse) {
            b.append(", reverse");
        }
        return b.append('}').toString();
    }
}
