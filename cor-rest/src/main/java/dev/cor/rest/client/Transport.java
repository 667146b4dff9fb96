package dev.cor.rest.client;

/**
 * How a request of one URL scheme gets its response: {@link Http1Transport} for {@code http} and
 * {@code https}; a {@code cor://} transport plugs in beside it, in {@link Transports}. It runs on the
 * caller's thread or coroutine, and waits only through {@link Waits}.
 */
interface Transport {
    CorRestClientResponse exchange(CorRestClient client, CorRestClientRequest request) throws CorRestClientException;
}
