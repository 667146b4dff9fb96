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

    public NgsiLdException(ErrorType type, String detail) {
        this(type, detail, null);
    }

    public NgsiLdException(ErrorType type, String detail, Throwable cause) {
        super(detail, cause, false, false);
        this.type = Objects.requireNonNull(type, "type");
    }

    public ErrorType type() {
        return type;
    }

    public int status() {
        return type.status();
    }

    public String detail() {
        return getMessage();
    }

    public static NgsiLdException badData(String detail) {
        return new NgsiLdException(ErrorType.BAD_REQUEST_DATA, detail);
    }

    public static NgsiLdException invalid(String detail) {
        return new NgsiLdException(ErrorType.INVALID_REQUEST, detail);
    }

    public static NgsiLdException notFound(String detail) {
        return new NgsiLdException(ErrorType.RESOURCE_NOT_FOUND, detail);
    }
}
