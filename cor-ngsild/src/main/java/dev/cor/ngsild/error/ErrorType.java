package dev.cor.ngsild.error;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The NGSI-LD error types (ETSI GS CIM 009 § 5.5.2) with the HTTP status each maps to
 * (§ 6.3.2, Table 6.3.2-1). Every error the broker answers is one of these, as a
 * ProblemDetails body ({@code type}, {@code title}, {@code status}, {@code detail}).
 */
public enum ErrorType {
    INVALID_REQUEST("InvalidRequest", 400, "Invalid request"),
    BAD_REQUEST_DATA("BadRequestData", 400, "Bad request data"),
    ALREADY_EXISTS("AlreadyExists", 409, "Already exists"),
    /** What a registration's mode forbids (§ 5.9.2.4, V1.8 and later): an exclusive or redirect one over data held here. */
    CONFLICT("Conflict", 409, "Conflict"),
    OPERATION_NOT_SUPPORTED("OperationNotSupported", 422, "Operation not supported"),
    RESOURCE_NOT_FOUND("ResourceNotFound", 404, "Resource not found"),
    INTERNAL_ERROR("InternalError", 500, "Internal error"),
    TOO_COMPLEX_QUERY("TooComplexQuery", 403, "Too complex query"),
    TOO_MANY_RESULTS("TooManyResults", 403, "Too many results"),
    /**
     * A remote {@code @context} that could not be had: 504, as Table 6.3.2-1 gives it since V1.8.1
     * (Stellio and the ETSI suite's 043_01 too; it was 503 before, as Orion-LD and Scorpio still
     * answer).
     */
    LD_CONTEXT_NOT_AVAILABLE("LdContextNotAvailable", 504, "@context not available"),
    NO_MULTI_TENANT_SUPPORT("NoMultiTenantSupport", 501, "No multi-tenant support"),
    NONEXISTENT_TENANT("NonexistentTenant", 404, "Nonexistent tenant"),
    /** HTTP's own errors that the binding answers with an NGSI-LD body (§ 6.3.2, "in addition"). */
    METHOD_NOT_ALLOWED("MethodNotAllowed", 405, "Method not allowed"),
    /** No valid credential (the answer carries a {@code WWW-Authenticate} challenge). */
    UNAUTHORIZED("Unauthorized", 401, "Unauthorized"),
    /** A valid credential that does not allow this tenant or operation. */
    FORBIDDEN("Forbidden", 403, "Forbidden"),
    NOT_ACCEPTABLE("NotAcceptable", 406, "Not acceptable"),
    PAYLOAD_TOO_LARGE("PayloadTooLarge", 413, "Request entity too large"),
    NOT_IMPLEMENTED("NotImplemented", 501, "Not implemented"),
    /** A write that came round a loop of brokers (its Via names this one) and would be forwarded again (§ 6.3.17, 6.3.18). */
    LOOP_DETECTED("LoopDetected", 508, "Loop detected"),
    SERVICE_UNAVAILABLE("ServiceUnavailable", 503, "Service unavailable");

    private static final String PREFIX = "https://uri.etsi.org/ngsi-ld/errors/";

    private final String uri;
    private final int status;
    private final String title;

    ErrorType(String name, int status, String title) {
        this.uri = PREFIX + name;
        this.status = status;
        this.title = title;
    }

    /**
     * The error a context source answered, as this broker reports it again: the type its
     * ProblemDetails names when it is one of these, else the one its status means (400, 404,
     * 409), else ServiceUnavailable.
     */
    public static ErrorType ofSource(JsonNode problem, int status) {
        String type = problem == null ? "" : problem.path("type").asText("");
        for (ErrorType t : values()) {
            if (t.uri.equals(type)) {
                return t;
            }
        }
        return switch (status) {
            case 400 -> BAD_REQUEST_DATA;
            case 404 -> RESOURCE_NOT_FOUND;
            case 409 -> ALREADY_EXISTS;
            default -> SERVICE_UNAVAILABLE;
        };
    }

    /** The error's URI, the ProblemDetails {@code type}. */
    public String uri() {
        return uri;
    }

    /** The HTTP status it is answered with. */
    public int status() {
        return status;
    }

    /** The ProblemDetails {@code title}. */
    public String title() {
        return title;
    }
}
