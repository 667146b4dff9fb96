package dev.cor.ngsild.model;

/** Which time of an instance a temporal query reads (§ 4.11, {@code timeproperty}): {@code observedAt} by default. */
public enum TimeProperty {
    OBSERVED_AT("observedAt"), CREATED_AT("createdAt"), MODIFIED_AT("modifiedAt"), DELETED_AT("deletedAt");

    private final String member;

    TimeProperty(String member) {
        this.member = member;
    }

    /** Its name as a parameter and a member ({@code observedAt}, ...). */
    public String member() {
        return member;
    }

    /** The property named {@code member}, or {@code null}. */
    public static TimeProperty of(String member) {
        for (TimeProperty p : values()) {
            if (p.member.equals(member)) {
                return p;
            }
        }
        return null;
    }
}
