package dev.cor.rest.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/** A connection's bytes as they are: {@code http://}. */
final class PlainConduit extends Conduit {
    PlainConduit(SocketChannel channel) {
        super(channel);
    }

    @Override
    int read(ByteBuffer dst, long deadlineNanos, Waits.Phase phase) throws IOException {
        while (true) {
            // read first: the bytes are often there already, and a wait costs a round of the loop
            int n = channel.read(dst);
            if (n != 0) {
                return n;
            }
            Waits.await(channel, SelectionKey.OP_READ, deadlineNanos, phase);
        }
    }

    @Override
    void write(ByteBuffer src, long deadlineNanos, Waits.Phase phase) throws IOException {
        while (src.hasRemaining()) {
            if (channel.write(src) == 0) {
                Waits.await(channel, SelectionKey.OP_WRITE, deadlineNanos, phase);
            }
        }
    }

    @Override
    boolean usableAfterIdle() {
        if (!channel.isOpen()) {
            return false;
        }
        try {
            // 0: nothing came while idle. -1: the peer closed. Anything else was never asked for.
            return channel.read(ByteBuffer.allocate(1)) == 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    boolean anyIdleInputIsFatal() {
        return true;
    }

    @Override
    void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // closing: nothing more to do
        }
    }
}
