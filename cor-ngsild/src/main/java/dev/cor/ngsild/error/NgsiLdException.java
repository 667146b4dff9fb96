package dev.cor.ngsild.error;

import java.util.Objects;

/**
 * An error answered as an NGSI-LD ProblemDetails: its {@link ErrorType} gives the {@code type}
 * URI and the status; the detail says what was wrong, naming the member, parameter or value.
 * Thrown anywhere under a request's handling; the API turns it into the answer.
 */
public final class NgsiLdException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorType type;

    /** An error of {@code type}; {@code detail} becomes the ProblemDetails {@code detail}. */
    public NgsiLdException(ErrorType type, String detail) {
        this(type, detail, null);
    }

    /** As {@link #NgsiLdException(ErrorType, String)}, with what caused it (for the log, never for the answer). */
    public NgsiLdException(ErrorType type, String detail, Throwable cause) {
        super(detail, cause, false, false);
        this.type = Objects.requireNonNull(type, "type");
    }

    /** Its type. */
    public ErrorType type() {
        return type;
    }

    /** The HTTP status its type is answered with. */
    public int status() {
        return type.status();
    }

    /** What was wrong, as the answer says it. */
    public String detail() {
        return getMessage();
    }

    /** A BadRequestData (400). */
    public static NgsiLdException badData(String detail) {
        return new NgsiLdException(ErrorType.BAD_REQUEST_DATA, detail);
    }

    /** An InvalidRequest (400). */
    public static NgsiLdException invalid(String detail) {
        return new NgsiLdException(ErrorType.INVALID_REQUEST, detail);
    }

    /** A ResourceNotFound (404). */
    public static NgsiLdException notFound(String detail) {
        return new NgsiLdException(ErrorType.RESOURCE_NOT_FOUND, detail);
    }
}
