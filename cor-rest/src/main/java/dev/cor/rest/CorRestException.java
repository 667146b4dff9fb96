package dev.cor.rest;

/**
 * An error a handler wants answered with a status: {@link CorRest#fail(CorRestException)} turns
 * it into a problem-details answer ({@code application/problem+json}: type, title, status, detail).
 */
public class CorRestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String type;
    private final String title;

    /** @throws IllegalArgumentException for a status outside 100..599 */
    public CorRestException(int status, String title, String detail) {
        this(status, "about:blank", title, detail, null);
    }

    /** @throws IllegalArgumentException for a status outside 100..599 */
    public CorRestException(int status, String type, String title, String detail, Throwable cause) {
        super(detail, cause);
        this.status = CorRest.checkStatus(status);
        this.type = type;
        this.title = title;
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String title() {
        return title;
    }

    public String detail() {
        return getMessage();
    }
}
