package dev.cor.bench.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/** Response framing, fed whole and one byte at a time. */
class HttpResponseParserTest {
    private final HttpResponseParser parser = new HttpResponseParser();

    /** Feeds {@code text} in pieces of {@code step} bytes; returns the bytes left after the answer (-1: incomplete). */
    private int feed(String text, int step, boolean head) throws Exception {
        parser.reset(head);
        byte[] all = text.getBytes(StandardCharsets.ISO_8859_1);
        for (int at = 0; at < all.length; at += step) {
            ByteBuffer b = ByteBuffer.wrap(all, at, Math.min(step, all.length - at));
            if (parser.feed(b)) {
                return all.length - b.position();
            }
        }
        return -1;
    }

    private void bothWays(String text, int status, boolean keepAlive, int left) throws Exception {
        for (int step : new int[] {1, 3, 1 << 20}) {
            assertEquals(left, feed(text, step, false), "step " + step);
            assertEquals(status, parser.status());
            assertEquals(keepAlive, parser.keepAlive());
        }
    }

    @Test
    void contentLength() throws Exception {
        bothWays("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 5\r\n\r\nhello", 200, true, 0);
    }

    @Test
    void chunkedWithExtensionsAndTrailers() throws Exception {
        bothWays("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\n",
                201, true, 0);
    }

    @Test
    void connectionCloseAndHttp10() throws Exception {
        bothWays("HTTP/1.1 404 Not Found\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n", 404, false, 0);
        bothWays("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", 200, false, 0);
        bothWays("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", 200, true, 0);
    }

    @Test
    void noBodyForHead204And304AndInterimAnswersAreSkipped() throws Exception {
        assertEquals(0, feed("HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", 1, true));
        bothWays("HTTP/1.1 204 No Content\r\n\r\n", 204, true, 0);
        bothWays("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, true, 0);
    }

    @Test
    void bytesAfterTheAnswerAreLeftForTheCaller() throws Exception {
        bothWays("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", 200, true, 5);
    }

    @Test
    void bodyWithoutLengthRunsToTheClose() throws Exception {
        assertEquals(-1, feed("HTTP/1.1 200 OK\r\n\r\nsome body", 4, false));
        assertTrue(parser.endOfStream());
        assertFalse(parser.keepAlive());
    }

    @Test
    void brokenFramingIsAProtocolError() {
        for (String bad : new String[] {"HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
                "HTTP/1.1 200 OK\r\nX: " + "a".repeat(HttpResponseParser.MAX_LINE) + "\r\n\r\n"}) {
            assertThrows(HttpResponseParser.ProtocolException.class, () -> feed(bad, 7, false), bad);
        }
    }
}
