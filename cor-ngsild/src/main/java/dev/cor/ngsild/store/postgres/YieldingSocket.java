package dev.cor.ngsild.store.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

import dev.cor.rest.CorRest;

/**
 * A client socket over a non-blocking {@link SocketChannel} whose every wait - the connect, a
 * read with nothing to read, a write the kernel cannot take - goes through
 * {@link CorRest#waitFd}: inside a coroutine the coroutine yields and its loop serves everyone
 * else until the channel is ready; on a plain thread the thread blocks, as a socket would. What
 * pgjdbc's {@code PGStream} needs of a {@link Socket} (its {@code socketFactory}, see
 * {@link YieldingSocketFactory}): connect with a timeout, {@code SO_TIMEOUT} on reads (a
 * {@link SocketTimeoutException} past it, the socket still usable), the options it sets, and
 * streams that can be closed in any order, more than once.
 * <p>
 * Neither the socket nor its streams hold a monitor while they wait, so a coroutine is never
 * pinned here. One reader and one writer at a time - the driver's per-connection lock and the
 * pool's one coroutine per connection make it so; {@link #close()} from any thread.
 */
final class YieldingSocket extends Socket {
    private final SocketChannel channel;
    private volatile int soTimeoutMs;
    private volatile boolean connected;
    private final InputStream in = new In();
    private final OutputStream out = new Out();

    YieldingSocket() throws IOException {
        this.channel = SocketChannel.open();
        channel.configureBlocking(false);
    }

    @Override
    public void connect(SocketAddress endpoint) throws IOException {
        connect(endpoint, 0);
    }

    /** Connects within {@code timeoutMs} (0: no bound of its own - the caller's wait is the bound). */
    @Override
    public void connect(SocketAddress endpoint, int timeoutMs) throws IOException {
        if (!(endpoint instanceof InetSocketAddress a) || a.isUnresolved()) {
            throw new SocketException("a resolved address is needed, not " + endpoint);
        }
        try {
            if (!channel.connect(a)) {
                long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : NONE;
                while (!channel.finishConnect()) {
                    long left = remainingMs(deadline);
                    if (left == 0 || CorRest.waitFd(channel, SelectionKey.OP_CONNECT, left) == 0) {
                        throw new SocketTimeoutException("connect to " + a + " timed out after " + timeoutMs + " ms");
                    }
                }
            }
            connected = true;
        } catch (IOException e) {
            channel.close();
            throw e;
        }
    }

    /** {@link CorRest#remainingMs} of {@code deadline}, or -1 (no deadline: {@link #NONE}). */
    private static long remainingMs(long deadline) {
        return deadline == NONE ? -1 : CorRest.remainingMs(deadline);
    }

    /** The deadline of a wait that has none ({@code SO_TIMEOUT} 0). */
    private static final long NONE = Long.MAX_VALUE;

    @Override
    public InputStream getInputStream() throws IOException {
        if (!connected || channel.socket().isInputShutdown()) {
            throw new SocketException(connected ? "input shut down" : "not connected");
        }
        return in;
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        if (!connected || channel.socket().isOutputShutdown()) {
            throw new SocketException(connected ? "output shut down" : "not connected");
        }
        return out;
    }

    /** Reads: what the channel has, or a wait for more within {@code SO_TIMEOUT}. */
    private final class In extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            ByteBuffer buf = ByteBuffer.wrap(b, off, len);
            int timeout = soTimeoutMs;
            long deadline = timeout > 0 ? System.nanoTime() + timeout * 1_000_000L : NONE;
            while (true) {
                int n = channel.read(buf);
                if (n != 0) {
                    return n;
                }
                long left = remainingMs(deadline);
                if (left == 0 || CorRest.waitFd(channel, SelectionKey.OP_READ, left) == 0) {
                    throw new SocketTimeoutException("read timed out after " + timeout + " ms");
                }
            }
        }

        @Override
        public int available() throws IOException {
            return 0;
        }

        @Override
        public void close() throws IOException {
            YieldingSocket.this.close();
        }
    }

    /** Writes: all of it, waiting while the kernel's buffer is full (as long as it takes: the peer's reads bound it). */
    private final class Out extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            ByteBuffer buf = ByteBuffer.wrap(b, off, len);
            int timeout = soTimeoutMs;
            long deadline = timeout > 0 ? System.nanoTime() + timeout * 1_000_000L : NONE;
            while (buf.hasRemaining()) {
                if (channel.write(buf) == 0) {
                    long left = remainingMs(deadline);
                    if (left == 0 || CorRest.waitFd(channel, SelectionKey.OP_WRITE, left) == 0) {
                        // what a stalled peer gives: the connection is then unusable, as the driver expects of a failed write
                        throw new SocketTimeoutException("write timed out after " + timeout + " ms");
                    }
                }
            }
        }

        @Override
        public void close() throws IOException {
            YieldingSocket.this.close();
        }
    }

    // ---------------------------------------------------------------- what the driver sets and asks

    /** Bounds every read, and a write that cannot go on (0: no bound, as for a socket). */
    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        soTimeoutMs = timeout;
    }

    @Override
    public int getSoTimeout() {
        return soTimeoutMs;
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        option(() -> channel.setOption(StandardSocketOptions.TCP_NODELAY, on));
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return option(() -> channel.getOption(StandardSocketOptions.TCP_NODELAY));
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        option(() -> channel.setOption(StandardSocketOptions.SO_KEEPALIVE, on));
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return option(() -> channel.getOption(StandardSocketOptions.SO_KEEPALIVE));
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        option(() -> channel.setOption(StandardSocketOptions.SO_RCVBUF, size));
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return option(() -> channel.getOption(StandardSocketOptions.SO_RCVBUF));
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        option(() -> channel.setOption(StandardSocketOptions.SO_SNDBUF, size));
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return option(() -> channel.getOption(StandardSocketOptions.SO_SNDBUF));
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        option(() -> channel.setOption(StandardSocketOptions.SO_LINGER, on ? linger : -1));
    }

    @Override
    public int getSoLinger() throws SocketException {
        return option(() -> channel.getOption(StandardSocketOptions.SO_LINGER));
    }

    private interface Option<T> {
        T apply() throws IOException;
    }

    private static <T> T option(Option<T> o) throws SocketException {
        try {
            return o.apply();
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    @Override
    public boolean isConnected() {
        return connected;
    }

    @Override
    public boolean isBound() {
        return channel.socket().isBound();
    }

    @Override
    public boolean isClosed() {
        return !channel.isOpen();
    }

    @Override
    public boolean isInputShutdown() {
        return channel.socket().isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
        return channel.socket().isOutputShutdown();
    }

    @Override
    public void shutdownInput() throws IOException {
        channel.shutdownInput();
    }

    @Override
    public void shutdownOutput() throws IOException {
        channel.shutdownOutput();
    }

    @Override
    public InetAddress getInetAddress() {
        return channel.socket().getInetAddress();
    }

    @Override
    public int getPort() {
        return channel.socket().getPort();
    }

    @Override
    public InetAddress getLocalAddress() {
        return channel.socket().getLocalAddress();
    }

    @Override
    public int getLocalPort() {
        return channel.socket().getLocalPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return channel.socket().getRemoteSocketAddress();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return channel.socket().getLocalSocketAddress();
    }

    /** Closes the channel (and so its registration with any loop): any thread, any number of times. */
    @Override
    public void close() throws IOException {
        channel.close();
    }

    @Override
    public String toString() {
        return "YieldingSocket[" + channel + "]";
    }
}
