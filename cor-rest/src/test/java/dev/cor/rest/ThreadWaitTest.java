package dev.cor.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * A channel that waited on a plain thread (a blocking {@link CorRest#waitFd}) and is then closed
 * - on that thread or on another - releases its file descriptor at once: counted in
 * /proc/self/fd. (Left registered with a selector between waits, its descriptor would stay
 * until that selector's next select, which may never come.)
 */
@EnabledOnOs(OS.LINUX)
class ThreadWaitTest {
    private static long openFds() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    private static SocketChannel connect(ServerSocketChannel server) throws IOException {
        SocketChannel ch = SocketChannel.open(server.getLocalAddress());
        ch.configureBlocking(false);
        return ch;
    }

    private static void closeAfterAWait(ServerSocketChannel server, boolean onAnotherThread) throws Exception {
        // Warm up: the selector the waits use exists before counting. The warm-up channel stays
        // open until the end, so that no descriptor of it can linger into the count.
        try (SocketChannel warm = connect(server); SocketChannel warmPeer = server.accept()) {
            assertEquals(0, CorRest.waitFd(warm, SelectionKey.OP_READ, 20));
            closeAfterAWait(server, onAnotherThread, openFds());
        }
    }

    private static void closeAfterAWait(ServerSocketChannel server, boolean onAnotherThread, long before) throws Exception {
        SocketChannel ch = connect(server);
        SocketChannel peer = server.accept();
        try {
            assertEquals(before + 2, openFds(), "the client and the accepted side");
            assertEquals(0, CorRest.waitFd(ch, SelectionKey.OP_READ, 20), "nothing to read: the wait times out");
            assertEquals(SelectionKey.OP_WRITE, CorRest.waitFd(ch, SelectionKey.OP_WRITE, 1000));
            if (onAnotherThread) {
                Thread t = Thread.ofPlatform().start(() -> {
                    try {
                        ch.close();
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                });
                assertTrue(t.join(java.time.Duration.ofSeconds(10)));
            } else {
                ch.close();
            }
            assertEquals(before + 1, openFds(), "the closed channel's descriptor is gone at once");
        } finally {
            peer.close();
            ch.close();
        }
    }

    @Test
    void aChannelClosedOnItsOwnThreadAfterAWaitReleasesItsFdAtOnce() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            closeAfterAWait(server, false);
        }
    }

    @Test
    void aChannelClosedOnAnotherThreadAfterAWaitReleasesItsFdAtOnce() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            closeAfterAWait(server, true);
        }
    }

    @Test
    void aWaitEndsWithReadinessOrTimeout() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel ch = connect(server); SocketChannel peer = server.accept()) {
                long t0 = System.nanoTime();
                assertEquals(0, CorRest.waitFd(ch, SelectionKey.OP_READ, 100));
                assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) >= 90);
                peer.write(java.nio.ByteBuffer.wrap(new byte[] {1}));
                assertEquals(SelectionKey.OP_READ, CorRest.waitFd(ch, SelectionKey.OP_READ, 5000));
                assertEquals(SelectionKey.OP_READ, CorRest.waitFd(ch, SelectionKey.OP_READ, 5000), "a second wait on the same channel");
            }
        }
    }
}
