package dev.cor.ngsild.store.postgres;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

import javax.net.SocketFactory;

/**
 * The {@code socketFactory} pgjdbc is given ({@code socketFactory=} this class's name): its
 * sockets are {@link YieldingSocket}s, whose waits yield the calling coroutine to its loop (or,
 * on a plain thread, block it). pgjdbc makes its socket with {@link #createSocket()} and then
 * {@code connect(address, connectTimeout)}; it holds no monitor across a read or a write of it,
 * only its per-connection {@code ReentrantLock}s - which is why one connection serves one
 * coroutine from checkout to return ({@link LoopConnectionPool}). Stateless; pgjdbc builds one
 * per connection by reflection, so it is public with a public constructor.
 */
public final class YieldingSocketFactory extends SocketFactory {

    public YieldingSocketFactory() {
    }

    @Override
    public Socket createSocket() throws IOException {
        return new YieldingSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return createSocket(host, port);
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return createSocket(address, port);
    }

    private static Socket connected(InetSocketAddress a) throws IOException {
        YieldingSocket s = new YieldingSocket();
        s.connect(a, 0);
        return s;
    }
}
