package dev.cor.rest.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLSession;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The TLS conduit never spins: an engine whose wrap reports OK and consumes nothing fails the
 * write (or the handshake) at once, and one that asks for the peer's bytes first waits for them
 * no longer than the call's deadline. The engine is a real one with its wrap replaced; the
 * socket is real.
 */
class TlsConduitProgressTest {
    /** More wraps than any honest write needs: past it, the conduit spun. */
    private static final int SPIN = 1_000_000;

    private TestServer silent;
    private SocketChannel channel;

    @BeforeEach
    void connect() throws Exception {
        silent = TestServer.raw(TestServer::drain);
        channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", silent.port()));
        channel.configureBlocking(false);
    }

    @AfterEach
    void close() throws Exception {
        channel.close();
        silent.close();
    }

    private static long deadline(long ms) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
    }

    private static final Waits.Phase PHASE = () -> "the test's write";

    @Test
    void aWrapThatConsumesNothingFailsTheWriteAtOnceInsteadOfSpinning() throws Exception {
        StuckEngine engine = new StuckEngine(HandshakeStatus.NOT_HANDSHAKING);
        TlsConduit conduit = new TlsConduit(channel, engine);
        long t0 = System.nanoTime();
        CorRestClientException e = assertThrows(CorRestClientException.class,
                () -> conduit.write(ByteBuffer.wrap(new byte[100]), deadline(10_000), PHASE));
        assertEquals(CorRestClientException.Kind.TLS, e.kind(), e.toString());
        assertTrue(e.getMessage().contains("no progress"), e.getMessage());
        assertTrue(engine.wraps.get() < 100, "the conduit wrapped " + engine.wraps.get() + " times");
        assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) < 5000, "it did not fail at once");
    }

    @Test
    void aWrapThatWaitsForThePeersBytesWaitsOnlyUntilTheDeadline() throws Exception {
        StuckEngine engine = new StuckEngine(HandshakeStatus.NEED_UNWRAP); // and the peer sends nothing
        TlsConduit conduit = new TlsConduit(channel, engine);
        long t0 = System.nanoTime();
        CorRestClientException e = assertThrows(CorRestClientException.class,
                () -> conduit.write(ByteBuffer.wrap(new byte[100]), deadline(300), PHASE));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals(CorRestClientException.Kind.TIMEOUT, e.kind(), e.toString());
        assertEquals("the test's write", e.getMessage());
        assertTrue(ms >= 290 && ms < 5000, "it waited " + ms + " ms for a 300 ms deadline");
        assertTrue(engine.wraps.get() < 100, "the conduit wrapped " + engine.wraps.get() + " times");
    }

    @Test
    void aHandshakeWrapThatProducesNothingFailsInsteadOfSpinning() throws Exception {
        StuckEngine engine = new StuckEngine(HandshakeStatus.NEED_WRAP);
        TlsConduit conduit = new TlsConduit(channel, engine);
        CorRestClientException e = assertThrows(CorRestClientException.class,
                () -> conduit.handshake(deadline(10_000), PHASE));
        assertEquals(CorRestClientException.Kind.TLS, e.kind(), e.toString());
        assertTrue(engine.wraps.get() < 100, "the conduit wrapped " + engine.wraps.get() + " times");
    }

    /**
     * A real client engine whose wrap and unwrap make no progress: wrap answers OK with nothing
     * consumed or produced, unwrap BUFFER_UNDERFLOW, and the handshake status stays {@code status}.
     * Fails loudly past {@link #SPIN} wraps, so that a conduit that spins ends the test.
     */
    private static final class StuckEngine extends SSLEngine {
        final AtomicInteger wraps = new AtomicInteger();
        private final SSLEngine real;
        private final HandshakeStatus status;

        StuckEngine(HandshakeStatus status) throws Exception {
            this.real = SSLContext.getDefault().createSSLEngine("127.0.0.1", 443);
            this.real.setUseClientMode(true);
            this.status = status;
        }

        @Override
        public SSLEngineResult wrap(ByteBuffer[] srcs, int offset, int length, ByteBuffer dst) {
            if (wraps.incrementAndGet() > SPIN) {
                throw new AssertionError("the conduit spun: " + SPIN + " wraps that consumed nothing");
            }
            return new SSLEngineResult(Status.OK, status, 0, 0);
        }

        @Override
        public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int offset, int length) {
            return new SSLEngineResult(Status.BUFFER_UNDERFLOW, status, 0, 0);
        }

        @Override
        public HandshakeStatus getHandshakeStatus() {
            return status;
        }

        @Override
        public void beginHandshake() {
            // the status says what the handshake needs
        }

        @Override
        public Runnable getDelegatedTask() {
            return null;
        }

        @Override
        public SSLSession getSession() {
            return real.getSession();
        }

        @Override
        public void closeInbound() {
            // nothing came in
        }

        @Override
        public boolean isInboundDone() {
            return false;
        }

        @Override
        public void closeOutbound() {
            real.closeOutbound();
        }

        @Override
        public boolean isOutboundDone() {
            return false;
        }

        @Override
        public String[] getSupportedCipherSuites() {
            return real.getSupportedCipherSuites();
        }

        @Override
        public String[] getEnabledCipherSuites() {
            return real.getEnabledCipherSuites();
        }

        @Override
        public void setEnabledCipherSuites(String[] suites) {
            real.setEnabledCipherSuites(suites);
        }

        @Override
        public String[] getSupportedProtocols() {
            return real.getSupportedProtocols();
        }

        @Override
        public String[] getEnabledProtocols() {
            return real.getEnabledProtocols();
        }

        @Override
        public void setEnabledProtocols(String[] protocols) {
            real.setEnabledProtocols(protocols);
        }

        @Override
        public void setUseClientMode(boolean mode) {
            real.setUseClientMode(mode);
        }

        @Override
        public boolean getUseClientMode() {
            return real.getUseClientMode();
        }

        @Override
        public void setNeedClientAuth(boolean need) {
            real.setNeedClientAuth(need);
        }

        @Override
        public boolean getNeedClientAuth() {
            return real.getNeedClientAuth();
        }

        @Override
        public void setWantClientAuth(boolean want) {
            real.setWantClientAuth(want);
        }

        @Override
        public boolean getWantClientAuth() {
            return real.getWantClientAuth();
        }

        @Override
        public void setEnableSessionCreation(boolean flag) {
            real.setEnableSessionCreation(flag);
        }

        @Override
        public boolean getEnableSessionCreation() {
            return real.getEnableSessionCreation();
        }
    }
}
