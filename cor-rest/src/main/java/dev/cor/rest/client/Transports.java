package dev.cor.rest.client;

import dev.cor.rest.client.CorRestClientException.Kind;

/** The one place where a URL's scheme picks its transport: http, https, cor, cors. */
final class Transports {
    private Transports() {
    }

    static Transport forScheme(CorRestClient client, CorRestClientRequest request) throws CorRestClientException {
        return switch (request.scheme) {
            case "http" -> Http1Transport.PLAIN;
            case "https" -> {
                if (client.sslContext == null) {
                    throw new CorRestClientException(Kind.TLS, "cannot send " + request
                            + ": https is not enabled for this client");
                }
                yield Http1Transport.TLS;
            }
            case "cor" -> CorProtoTransport.PLAIN;
            case "cors" -> {
                if (client.sslContext == null) {
                    throw new CorRestClientException(Kind.TLS, "cannot send " + request
                            + ": cors is not enabled for this client");
                }
                yield CorProtoTransport.TLS;
            }
            default -> throw new CorRestClientException(Kind.REFUSED, "cannot send " + request
                    + ": no transport for the scheme " + request.scheme + "://");
        };
    }
}
