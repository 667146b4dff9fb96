package dev.cor.rest.proto;

import java.io.IOException;
import java.nio.channels.Channel;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** The builders' argument checks and the quiet close, shared by the server and the client. */
final class ProtoChecks {
    private ProtoChecks() {
    }

    static String text(String s, int maxBytes, String what) {
        Objects.requireNonNull(s, what);
        if (s.getBytes(StandardCharsets.UTF_8).length > maxBytes) {
            throw new IllegalArgumentException(what + " longer than " + maxBytes + " bytes of UTF-8");
        }
        return s;
    }

    static int range(int v, int min, int max, String what) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(what + " out of " + min + ".." + max + ": " + v);
        }
        return v;
    }

    static long range(long v, long min, long max, String what) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(what + " out of " + min + ".." + max + ": " + v);
        }
        return v;
    }

    static void closeQuietly(Channel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException e) {
                // closing: nothing more to do
            }
        }
    }
}
