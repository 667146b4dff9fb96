package dev.cor.rest.client;

import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;

import javax.net.ssl.SSLHandshakeException;

/**
 * What failed when TLS with a peer failed, in the client's own words ({@link #words()}): the one
 * place a JDK TLS exception is classified - the HTTP client's ({@link CorRestClientException#tlsFailure()})
 * and the broker's MQTT sockets both ask {@link #of}. The words say what failed, never what the
 * peer sent (its certificate's names, an alert's text) nor how to change any code. Immutable; any
 * thread.
 */
public enum TlsFailure {
    /** The peer's certificate chains to no CA the client trusts (or a CA's signature does not hold). */
    NOT_TRUSTED("its certificate is not trusted"),
    /** The peer's certificate (or one of its chain) has expired. */
    EXPIRED("its certificate has expired"),
    /** The peer's certificate (or one of its chain) is not valid yet. */
    NOT_YET_VALID("its certificate is not valid yet"),
    /** The peer's certificate is trusted but names another host than the one connected to. */
    NAME_MISMATCH("its certificate is not for this host name"),
    /** The handshake did not finish by its deadline. */
    HANDSHAKE_TIMEOUT("the handshake timed out"),
    /** The peer ended the handshake with an alert (it refused the client's hello, or its certificate). */
    REFUSED_BY_PEER("it refused the handshake"),
    /** The peer closed the connection during the handshake. */
    CLOSED_BY_PEER("it closed the connection during the handshake"),
    /** Anything else: not TLS at the other end, a protocol error. */
    FAILED("the handshake failed");

    /** The deepest cause chain looked at: a chain is a few links long; a loop of causes ends here. */
    private static final int MAX_CAUSES = 16;

    private final String words;

    TlsFailure(String words) {
        this.words = words;
    }

    /** What failed, as a clause about the peer: "its certificate is not trusted". */
    public String words() {
        return words;
    }

    /**
     * The failure {@code e} (an {@code SSLException} and its causes) is: a certificate's validity
     * or name before its trust, as the JDK checks trust first and gives the validity, then the
     * name, only of a chain it trusts.
     */
    public static TlsFailure of(Throwable e) {
        boolean certificate = false;
        int depth = 0;
        for (Throwable t = e; t != null && depth < MAX_CAUSES; t = t.getCause() == t ? null : t.getCause(), depth++) {
            if (t instanceof CertificateExpiredException) {
                return EXPIRED;
            }
            if (t instanceof CertificateNotYetValidException) {
                return NOT_YET_VALID;
            }
            if (t instanceof CertPathValidatorException v) {
                if (v.getReason() == CertPathValidatorException.BasicReason.EXPIRED) {
                    return EXPIRED;
                }
                if (v.getReason() == CertPathValidatorException.BasicReason.NOT_YET_VALID) {
                    return NOT_YET_VALID;
                }
                certificate = true;
            } else if (t instanceof CertPathBuilderException) {
                certificate = true;
            } else if (t instanceof CertificateException c && !certificate && nameMismatch(c)) {
                return NAME_MISMATCH;
            } else if (t instanceof CertificateException) {
                certificate = true;
            }
        }
        if (certificate) {
            return NOT_TRUSTED;
        }
        if (e instanceof SSLHandshakeException h && h.getMessage() != null && h.getMessage().startsWith("Received fatal alert")) {
            return REFUSED_BY_PEER;
        }
        return FAILED;
    }

    /**
     * The JDK's host name check (endpoint identification "HTTPS", RFC 2818/6125) throws a plain
     * {@code CertificateException} with one of these texts, and nothing else tells it apart.
     */
    private static boolean nameMismatch(CertificateException c) {
        String m = c.getMessage();
        return c.getCause() == null && m != null
                && (m.startsWith("No subject alternative") || m.startsWith("No name matching"));
    }
}
