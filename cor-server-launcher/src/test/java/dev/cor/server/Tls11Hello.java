package dev.cor.server;

import java.io.ByteArrayOutputStream;

/**
 * A TLS 1.1 ClientHello written byte by byte (RFC 4346 § 7.4.1.2), so that a test can offer
 * TLS 1.1 whatever its own JVM allows: ECDHE and RSA suites with AES-CBC-SHA, the groups and
 * point format ECDHE needs, and the renegotiation SCSV. A server that accepts it answers a
 * handshake record (0x16, ServerHello); one that refuses it answers an alert (0x15).
 */
final class Tls11Hello {
    private Tls11Hello() {
    }

    static byte[] bytes() {
        ByteArrayOutputStream hello = new ByteArrayOutputStream();
        hello.write(0x03);
        hello.write(0x02); // client_version TLS 1.1
        for (int i = 0; i < 32; i++) {
            hello.write(i * 7 + 1); // random
        }
        hello.write(0); // no session id
        int[] suites = {0xc009, 0xc00a, 0xc013, 0xc014, 0x002f, 0x0035, 0x00ff};
        u16(hello, suites.length * 2);
        for (int s : suites) {
            u16(hello, s);
        }
        hello.write(1);
        hello.write(0); // compression: null
        ByteArrayOutputStream ext = new ByteArrayOutputStream();
        u16(ext, 0x000a); // supported_groups: secp256r1, x25519
        u16(ext, 6);
        u16(ext, 4);
        u16(ext, 0x0017);
        u16(ext, 0x001d);
        u16(ext, 0x000b); // ec_point_formats: uncompressed
        u16(ext, 2);
        ext.write(1);
        ext.write(0);
        u16(hello, ext.size());
        hello.writeBytes(ext.toByteArray());

        ByteArrayOutputStream handshake = new ByteArrayOutputStream();
        handshake.write(0x01); // client_hello
        handshake.write(0);
        u16(handshake, hello.size());
        handshake.writeBytes(hello.toByteArray());

        ByteArrayOutputStream record = new ByteArrayOutputStream();
        record.write(0x16);
        record.write(0x03);
        record.write(0x02);
        u16(record, handshake.size());
        record.writeBytes(handshake.toByteArray());
        return record.toByteArray();
    }

    private static void u16(ByteArrayOutputStream out, int v) {
        out.write(v >>> 8);
        out.write(v);
    }
}
