package dev.cor.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** A test client on a raw socket: writes bytes as given, reads answers one by one. */
final class RawHttp implements AutoCloseable {
    final Socket socket;
    private final InputStream in;

    RawHttp(int port) throws IOException {
        socket = new Socket();
        socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        socket.setSoTimeout(5000);
        in = socket.getInputStream();
    }

    RawHttp send(String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.ISO_8859_1));
        socket.getOutputStream().flush();
        return this;
    }

    RawHttp send(byte[] bytes) throws IOException {
        socket.getOutputStream().write(bytes);
        socket.getOutputStream().flush();
        return this;
    }

    /** One answer: status line, fields, a Content-Length body (none for HEAD when asked). */
    Answer read(boolean head) throws IOException {
        String status = line();
        if (status == null) {
            return null;
        }
        Map<String, String> fields = new LinkedHashMap<>();
        String l;
        while ((l = line()) != null && !l.isEmpty()) {
            int c = l.indexOf(':');
            fields.put(l.substring(0, c).toLowerCase(Locale.ROOT), l.substring(c + 1).trim());
        }
        byte[] body = new byte[0];
        String cl = fields.get("content-length");
        if (cl != null && !head) {
            body = in.readNBytes(Integer.parseInt(cl));
        }
        return new Answer(Integer.parseInt(status.substring(9, 12)), status, fields, body);
    }

    Answer read() throws IOException {
        return read(false);
    }

    /** Whether the server closed the connection (end of stream within the socket timeout). */
    boolean closedByServer() throws IOException {
        try {
            return in.read() == -1;
        } catch (java.net.SocketException e) {
            return true;
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                String s = b.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    record Answer(int status, String statusLine, Map<String, String> fields, byte[] body) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }
}
