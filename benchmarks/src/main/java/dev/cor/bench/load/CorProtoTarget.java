package dev.cor.bench.load;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.rest.CorRestHeaders;
import dev.cor.rest.proto.CorProtoClient;
import dev.cor.rest.proto.CorProtoException;
import dev.cor.rest.proto.CorProtoResponse;

/**
 * A {@code cor://} server driven with the project's own multiplexed client: the generator's
 * thread becomes a cor loop (attached, driven by {@link #poll}), and each request is a coroutine
 * of it that sends through the client and tells the listener its outcome. The callers share
 * {@code sockets} multiplexed connections ({@code --sockets 1}: every caller on one connection).
 * Everything but {@link #wakeup()} runs on the generator's thread.
 */
final class CorProtoTarget implements Target {
    private final InetSocketAddress address;
    private final String method;
    private final String path;
    private final String query;
    private final CorRestHeaders headers = new CorRestHeaders();
    private final byte[] body;
    private final long timeoutMs;
    private CorCoLoop loop;
    private CorProtoClient client;
    private TargetListener listener;
    private int probesOut;
    private int probesFailed;
    private long initialConnections;

    CorProtoTarget(InetSocketAddress address, String requestTarget, String method, List<LoadOptions.Header> headers,
                   byte[] body, long timeoutMs) {
        this.address = address;
        int q = requestTarget.indexOf('?');
        this.path = q < 0 ? requestTarget : requestTarget.substring(0, q);
        this.query = q < 0 ? null : requestTarget.substring(q + 1);
        this.method = method;
        for (LoadOptions.Header h : headers) {
            this.headers.add(h.name(), h.value());
        }
        this.body = body != null && body.length > 0 ? body : null;
        this.timeoutMs = timeoutMs;
    }

    @Override
    public void open(int sockets, int callers, TargetListener l) throws IOException {
        this.listener = l;
        loop = CorCoLoop.builder().name("corRequest").coroutineCap(callers + sockets + 16).watchdogMs(0).build().attach();
        client = CorProtoClient.builder().name("corRequest").connectionsPerPeer(sockets)
                .connectTimeoutMs(timeoutMs).requestTimeoutMs(timeoutMs).build();
        // One request per connection first: the connections exist, and are known good, before the clock starts.
        for (int s = 0; s < sockets; s++) {
            probesOut++;
            if (CorCo.start(this::probe) == null) {
                throw new IOException("the load generator's loop refused a coroutine");
            }
        }
    }

    private Object probe() {
        try {
            exchange();
        } catch (CorProtoException e) {
            probesFailed++;
        } finally {
            probesOut--;
        }
        return null;
    }

    private CorProtoResponse exchange() throws CorProtoException {
        return client.send(method, address.getHostString(), address.getPort(), path, query, headers, null, body, timeoutMs);
    }

    @Override
    public int connected() {
        return client.connectionsLive();
    }

    @Override
    public int connecting() {
        return probesOut;
    }

    @Override
    public void send(int socket, int caller) {
        if (CorCo.start(() -> {
            try {
                listener.answered(caller, exchange().status());
            } catch (CorProtoException e) {
                listener.failed(caller, e.kind() + ": " + e.getMessage());
            }
            return null;
        }) == null) {
            listener.failed(caller, "the load generator's loop refused a coroutine");
        }
        if (initialConnections == 0) {
            initialConnections = client.connectionsOpened();
        }
    }

    @Override
    public void poll(long maxWaitNanos) {
        loop.runOnce(TimeUnit.NANOSECONDS.toMillis(maxWaitNanos));
    }

    @Override
    public void wakeup() {
        try {
            loop.execute(() -> { });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed already
        }
    }

    @Override
    public long reconnects() {
        return initialConnections == 0 ? 0 : Math.max(0, client.connectionsOpened() - initialConnections);
    }

    @Override
    public void close() {
        if (loop != null) {
            loop.stop();
            while (loop.runOnce(0)) {
                // until its coroutines are cancelled and it has ended
            }
        }
        if (client != null) {
            client.close();
        }
    }
}
