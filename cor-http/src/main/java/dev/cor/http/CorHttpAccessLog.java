package dev.cor.http;

import dev.cor.rest.CorRest;

/**
 * Told of every answer the server wrote in full, for an access log: given to
 * {@link CorHttpServer.Builder#accessLog}. Without one, the server's path costs one null check per
 * answer and takes no time stamp.
 * <p>
 * Called on the loop of the connection, right after the answer's last byte went to the socket -
 * so it must not block, nor wait, nor take a lock a thread off the loop may hold for long: put the
 * line in a buffer of that loop and let another thread write it (and drop it when that buffer is
 * full). An answer that could not be written (the client went away) is not reported.
 */
@FunctionalInterface
public interface CorHttpAccessLog {
    /**
     * One answer is out.
     *
     * @param loop      the index of the loop, from 0 to {@link CorHttpServer#loopCount()} - 1: one
     *                  thread per index, so a buffer per index needs no lock
     * @param exchange  the request as read (method, path, raw query, headers) and its answer
     *                  ({@link CorRest#status()}); for a request that could not be read (400, 408,
     *                  414, 431, ...) a stand-in: its method if it was read, else {@code -}, and its
     *                  path if it was read, else {@code -}. Valid during the call only.
     * @param bodyBytes bytes of the answer's body on the wire (0 for HEAD, 204, 304)
     * @param nanos     from the request's first byte read to the answer's last byte written
     */
    void answered(int loop, CorRest exchange, long bodyBytes, long nanos);
}
