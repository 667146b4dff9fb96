package dev.cor.ngsild.store.durable;

import java.nio.file.Path;
import java.util.function.Consumer;

import dev.cor.http.CorHttpServer;
import dev.cor.ngsild.BrokerHttp;
import dev.cor.ngsild.TestBroker;

/**
 * A broker on a {@link DurableEntityStore} for a test: the store opened on a directory, the
 * broker behind a real HTTP server on it, a client. {@link #close()} stops as an operator's stop
 * does (server, then the store's last snapshot); {@link #crash()} stops the server and then the
 * store as {@code kill -9} would leave it (nothing more written, no snapshot).
 */
final class DurableBroker implements AutoCloseable {
    final DurableEntityStore store;
    final TestBroker broker;
    final BrokerHttp http;

    private DurableBroker(DurableEntityStore store, TestBroker broker) {
        this.store = store;
        this.broker = broker;
        this.http = new BrokerHttp(broker);
    }

    static DurableBroker open(Path dir) {
        return open(dir, b -> { }, s -> { });
    }

    static DurableBroker open(Path dir, Consumer<DurableEntityStore.Builder> storeConfig,
            Consumer<CorHttpServer.Builder> serverConfig) {
        DurableEntityStore.Builder b = DurableEntityStore.builder(dir);
        storeConfig.accept(b);
        DurableEntityStore store = b.open();
        try {
            return new DurableBroker(store, TestBroker.start(c -> c.store(store), serverConfig));
        } catch (RuntimeException e) {
            store.close();
            throw e;
        }
    }

    void crash() throws InterruptedException {
        broker.close();
        store.crash();
    }

    @Override
    public void close() {
        broker.close();
        store.close();
    }
}
