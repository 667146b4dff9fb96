package dev.cor.ngsild.subscription;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import javax.net.SocketFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

import dev.cor.rest.OutboundPolicy;
import dev.cor.rest.client.CorRestClientException;

/**
 * The sockets of one MQTT connection: what Paho's TCP module is given to open its socket with
 * ({@code MqttConnectOptions.setSocketFactory}), so that the connection's owner can close them
 * whatever state Paho is in, and Paho never reads more than the MQTT it needs from a peer that
 * may be hostile.
 * <ul>
 * <li>{@link #close()} closes every socket opened and refuses any opened later (Paho's connect
 * thread may still be resolving the name when its connection is given up): Paho's threads then
 * see the end of their streams and stop.</li>
 * <li>The address Paho resolved is asked of the broker's {@link OutboundPolicy} before the
 * connect: a refused one is never connected to.</li>
 * <li>{@code mqtts}: the TLS layer is made here, over the plain socket, with the broker's
 * {@link SSLContext} (its clients' trust) and the host name verified, its handshake under the
 * connect deadline.</li>
 * <li>Reads wait until Paho's connect thread has ended ({@link #connectThreadEnded}). That thread
 * starts the receiver, sender and callback threads and waits for each to run by looking every
 * 100 ms; a receiver that stopped in between - its peer closed or answered garbage, or the
 * connection was given up and its socket closed - is never seen running, and the connect
 * thread waits for ever (Paho 1.2.5). A reader held here is running, so the connect thread goes
 * on; nothing the receiver reads can stop it before that thread is done.</li>
 * <li>Each packet the peer sends is framed here and refused past {@link #MAX_PACKET} bytes:
 * Paho allocates a packet's declared length (up to 256 MiB) before reading it, and a publisher
 * only ever receives acknowledgements of a few bytes.</li>
 * </ul>
 * Thread-safe: Paho's threads use the sockets, the owner closes them from another.
 */
final class MqttSockets extends SocketFactory {
    /** The largest packet accepted from a broker: CONNACK, PUBACK and PINGRESP are 2 to 4 bytes. */
    static final int MAX_PACKET = 4096;
    /** The longest a read waits for Paho's connect thread (it only starts threads and queues CONNECT). */
    private static final long CONNECT_THREAD_MS = 30_000;

    private final String host;
    private final SSLContext tls;
    private final OutboundPolicy policy;
    private final long connectTimeoutMs;
    private final List<Socket> opened = new ArrayList<>(1); // guarded by this
    private boolean closed;                                  // guarded by this
    private final CountDownLatch connectThread = new CountDownLatch(1);

    /** {@code tls}: the TLS of {@code mqtts}, {@code null} for plain {@code mqtt}. */
    MqttSockets(String host, SSLContext tls, OutboundPolicy policy, long connectTimeoutMs) {
        this.host = host;
        this.tls = tls;
        this.policy = policy;
        this.connectTimeoutMs = connectTimeoutMs;
    }

    @Override
    public Socket createSocket() throws IOException {
        PeerSocket s = new PeerSocket();
        synchronized (this) {
            if (!closed) {
                opened.add(s);
                return s;
            }
        }
        throw new SocketException("the MQTT connection was given up");
    }

    @Override
    public Socket createSocket(String h, int port) throws IOException {
        return connected(new InetSocketAddress(h, port));
    }

    @Override
    public Socket createSocket(String h, int port, InetAddress localHost, int localPort) throws IOException {
        return connected(new InetSocketAddress(h, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port) throws IOException {
        return connected(new InetSocketAddress(address, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return connected(new InetSocketAddress(address, port));
    }

    private Socket connected(InetSocketAddress to) throws IOException {
        Socket s = createSocket();
        s.connect(to, (int) connectTimeoutMs);
        return s;
    }

    /** Paho's connect thread has ended: reads may go on. */
    void connectThreadEnded() {
        connectThread.countDown();
    }

    /**
     * Waits up to {@code ms} for Paho's connect thread to end; whether it has. Uninterruptible
     * (an interrupt is kept for later): Paho's threads are interrupted when they are shut down,
     * and a reader that gave up here would stop the receiver too early.
     */
    boolean awaitConnectThread(long ms) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        boolean interrupted = false;
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                try {
                    return connectThread.await(Math.max(0, left), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Closes every socket and refuses new ones. Never blocks: no TLS close_notify to a peer that may not read. */
    void close() {
        List<Socket> all;
        synchronized (this) {
            closed = true;
            all = List.copyOf(opened);
            opened.clear();
        }
        for (Socket s : all) {
            try {
                s.close();
            } catch (IOException e) {
                // closing: nothing more to do
            }
        }
    }

    /**
     * The socket Paho holds: a plain socket inside (its own impl is never connected), the TLS
     * layer over it for {@code mqtts}, and the gated, framed input. Paho's TCP module calls
     * {@code connect}, {@code setSoTimeout}, the streams and {@code close}; nothing else is used.
     */
    private final class PeerSocket extends Socket {
        private final Socket plain = new Socket();
        private volatile Socket io;
        private InputStream in; // guarded by this

        @Override
        public void connect(SocketAddress endpoint) throws IOException {
            connect(endpoint, (int) connectTimeoutMs);
        }

        @Override
        public void connect(SocketAddress endpoint, int timeout) throws IOException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(connectTimeoutMs);
            InetAddress address = endpoint instanceof InetSocketAddress a ? a.getAddress() : null;
            if (address == null) {
                throw new UnknownHostException("the MQTT broker's host did not resolve");
            }
            if (!policy.permits(address)) { // the address Paho resolved, the one connected to
                throw new CorRestClientException(CorRestClientException.Kind.DENIED, OutboundPolicy.REFUSAL);
            }
            plain.connect(endpoint, (int) connectTimeoutMs);
            if (tls == null) {
                io = plain;
                return;
            }
            SSLSocket s = (SSLSocket) tls.getSocketFactory().createSocket(plain, host,
                    ((InetSocketAddress) endpoint).getPort(), true);
            SSLParameters p = s.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS");
            try {
                p.setServerNames(List.of(new SNIHostName(host)));
            } catch (IllegalArgumentException literal) {
                // an address, not a name: no SNI
            }
            s.setSSLParameters(p);
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw new SocketTimeoutException("no time left for the TLS handshake");
            }
            plain.setSoTimeout((int) left);
            try {
                s.startHandshake();
            } catch (SocketTimeoutException e) {
                throw new HandshakeTimeout(e);
            }
            io = s;
        }

        private Socket io() throws SocketException {
            Socket s = io;
            if (s == null) {
                throw new SocketException("not connected");
            }
            return s;
        }

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) {
                in = new FramedInput(io().getInputStream(), this);
            }
            return in;
        }

        @Override
        public OutputStream getOutputStream() throws IOException {
            return io().getOutputStream();
        }

        /** Holds a read until Paho's connect thread has ended (see the class comment). */
        void awaitConnectThread() throws IOException {
            if (connectThread.getCount() != 0 && !MqttSockets.this.awaitConnectThread(CONNECT_THREAD_MS)) {
                throw new SocketException("Paho's connect thread did not end within " + CONNECT_THREAD_MS + " ms");
            }
        }

        @Override
        public void setSoTimeout(int timeout) throws SocketException {
            Socket s = io;
            (s != null ? s : plain).setSoTimeout(timeout);
        }

        @Override
        public int getSoTimeout() throws SocketException {
            Socket s = io;
            return (s != null ? s : plain).getSoTimeout();
        }

        @Override
        public void close() throws IOException {
            plain.close(); // under the TLS layer: no close_notify to write, nothing to wait for
        }

        @Override
        public boolean isClosed() {
            return plain.isClosed();
        }

        @Override
        public boolean isConnected() {
            return plain.isConnected();
        }

        @Override
        public InetAddress getInetAddress() {
            return plain.getInetAddress();
        }

        @Override
        public int getPort() {
            return plain.getPort();
        }

        @Override
        public String toString() {
            return "MQTT socket to " + plain.getRemoteSocketAddress();
        }
    }

    /**
     * What Paho reads: nothing before its connect thread has ended, then the peer's bytes packet by packet -
     * a fixed header, its remaining length (at most four bytes), that many bytes - with no packet
     * over {@link #MAX_PACKET}.
     */
    private static final class FramedInput extends FilterInputStream {
        private final PeerSocket socket;
        private int lengthBytes = -1; // -1: a packet's first byte comes next; 0..3: remaining-length bytes read
        private int length;
        private long remaining;       // bytes of the current packet's body still to come

        FramedInput(InputStream in, PeerSocket socket) {
            super(in);
            this.socket = socket;
        }

        @Override
        public int read() throws IOException {
            socket.awaitConnectThread();
            int b = in.read();
            if (b >= 0) {
                take(b);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            socket.awaitConnectThread();
            int n = in.read(b, off, len);
            int i = 0;
            while (i < n) {
                if (lengthBytes < 0 && remaining > 0) {
                    int body = (int) Math.min(remaining, n - i);
                    remaining -= body;
                    i += body;
                } else {
                    take(b[off + i] & 0xFF);
                    i++;
                }
            }
            return n;
        }

        private void take(int b) throws IOException {
            if (lengthBytes < 0) {
                if (remaining > 0) {
                    remaining--; // a body byte
                    return;
                }
                lengthBytes = 0; // a fixed header's first byte: Paho judges its type
                length = 0;
                return;
            }
            length |= (b & 0x7F) << (7 * lengthBytes);
            lengthBytes++;
            if ((b & 0x80) != 0) {
                if (lengthBytes == 4) {
                    throw new MqttPeerException("sent a packet length of more than four bytes");
                }
                return;
            }
            if (length > MAX_PACKET) {
                throw new MqttPeerException("announced a packet of " + length + " bytes (at most " + MAX_PACKET
                        + " are taken from a broker)");
            }
            lengthBytes = -1;
            remaining = length;
        }

        @Override
        public long skip(long n) throws IOException {
            throw new IOException("not supported");
        }

        @Override
        public boolean markSupported() {
            return false;
        }
    }

    /** The TLS handshake did not finish by the connect deadline. */
    static final class HandshakeTimeout extends SocketTimeoutException {
        private static final long serialVersionUID = 1L;

        HandshakeTimeout(SocketTimeoutException cause) {
            super("the TLS handshake did not finish in time");
            initCause(cause);
        }
    }

    /** The peer broke the MQTT framing: the message is ours (it carries no byte of the peer's but a length). */
    static final class MqttPeerException extends IOException {
        private static final long serialVersionUID = 1L;

        MqttPeerException(String message) {
            super(message);
        }
    }
}
