package dev.cor.rest.proto;

import static dev.cor.rest.proto.ProtoFixture.drain;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;

import dev.cor.rest.CorRestHeaders;

/**
 * Test helper: a peer of a {@link CorProtoServer} that writes whatever bytes it likes and reads
 * frames back with a blocking socket (reads time out after 10 s: a test fails, it never hangs).
 * Its own thread only.
 */
final class RawPeer implements AutoCloseable {
    final Socket socket;
    final DataInputStream in;
    private final String token;
    /** Encodes like a client past the handshake, its name table in step with the server's. */
    final CorProtoCodec codec = CorProtoCodec.open(64 << 10, CorProtoCodec.DEFAULT_NAME_TABLE);
    /** Decodes what the server sends, its name table in step with the server's. */
    private final CorProtoCodec reader = CorProtoCodec.open(CorProtoCodec.HARD_MAX_FRAME, CorProtoCodec.DEFAULT_NAME_TABLE);

    /**
     * @param token          what {@link #open()} sends in HELLO
     * @param receiveBuffer  the socket's receive buffer (set before the connect), or 0 for the default
     */
    RawPeer(int port, String token, int receiveBuffer) throws IOException {
        this.token = token;
        socket = new Socket();
        if (receiveBuffer > 0) {
            socket.setReceiveBufferSize(receiveBuffer);
        }
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        socket.setSoTimeout(10_000);
        in = new DataInputStream(socket.getInputStream());
    }

    /** A peer over a socket already connected - a TLS one, say (reads time out after 10 s). */
    RawPeer(Socket connected, String token) throws IOException {
        this.token = token;
        socket = connected;
        socket.setSoTimeout(10_000);
        in = new DataInputStream(socket.getInputStream());
    }

    RawPeer write(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
        return this;
    }

    RawPeer hello(int version, String token) throws IOException {
        CorProtoCodec c = new CorProtoCodec();
        c.writeHello(64 << 10, 16, CorProtoCodec.DEFAULT_NAME_TABLE, "raw-peer", token);
        byte[] b = drain(c);
        ByteBuffer.wrap(b).putShort(CorProtoCodec.HEADER_BYTES, (short) version);
        return write(b);
    }

    /** HELLO with the token, and its HELLO-ACK read. */
    RawPeer open() throws IOException {
        hello(CorProtoCodec.VERSION, token);
        assertEquals(CorProtoCodec.HELLO_ACK, readFrame().frameType());
        return this;
    }

    byte[] request(int stream, String path) throws CorProtoException {
        codec.writeRequest(stream, "GET", path, null, new CorRestHeaders().add("Accept", "text/plain"), null, null);
        return drain(codec);
    }

    /**
     * Reads the next whole frame; the codec returned is left on it. Decode every RESPONSE read
     * this way, or the name table falls out of step with the server's.
     */
    CorProtoCodec readFrame() throws IOException {
        ProtoFixture.readFrame(in, reader);
        return reader;
    }

    /** The GOAWAY the server must send, then the end of the stream. */
    CorProtoCodec.Problem expectGoAwayAndClose(CorProtoError code) throws IOException {
        CorProtoCodec c = readFrame();
        assertEquals(CorProtoCodec.GOAWAY, c.frameType(), "a GOAWAY");
        CorProtoCodec.Problem p = c.readGoAway();
        assertEquals(code, p.code(), p.describe());
        assertTrue(!p.reason().isEmpty(), "GOAWAY carries a reason");
        assertEquals(-1, readUntilEnd(), "the server closes after GOAWAY");
        return p;
    }

    /** Reads until the server closes; -1 then (a read timeout fails instead). */
    int readUntilEnd() throws IOException {
        InputStream s = socket.getInputStream();
        try {
            while (true) {
                int b = s.read();
                if (b < 0) {
                    return -1;
                }
            }
        } catch (EOFException e) {
            return -1;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
