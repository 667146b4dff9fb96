package dev.cor.ngsild.model;

/**
 * The kinds of NGSI-LD attribute (ETSI GS CIM 009 § 4.5.2-4.5.9, § 5.2.5-5.2.36): each its
 * {@code type} name and the member that carries its value.
 */
public enum AttributeKind {
    PROPERTY("Property", "value"),
    RELATIONSHIP("Relationship", "object"),
    GEO_PROPERTY("GeoProperty", "value"),
    LANGUAGE_PROPERTY("LanguageProperty", "languageMap"),
    LIST_PROPERTY("ListProperty", "valueList"),
    LIST_RELATIONSHIP("ListRelationship", "objectList"),
    VOCAB_PROPERTY("VocabProperty", "vocab"),
    JSON_PROPERTY("JsonProperty", "json");

    private final String typeName;
    private final String valueMember;

    AttributeKind(String typeName, String valueMember) {
        this.typeName = typeName;
        this.valueMember = valueMember;
    }

    /** The {@code type} of the attribute in the normalized representation. */
    public String typeName() {
        return typeName;
    }

    /** The member that holds the value: {@code value}, {@code object}, {@code languageMap}, ... */
    public String valueMember() {
        return valueMember;
    }

    /** The kind whose {@code type} is {@code name}, or {@code null}. */
    public static AttributeKind ofType(String name) {
        for (AttributeKind k : values()) {
            if (k.typeName.equals(name)) {
                return k;
            }
        }
        return null;
    }

    /** The kind whose value member is {@code member}, or {@code null}. */
    public static AttributeKind ofValueMember(String member) {
        for (AttributeKind k : values()) {
            if (k.valueMember.equals(member) && k != GEO_PROPERTY) {
                return k;
            }
        }
        return null;
    }
}
