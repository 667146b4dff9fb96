package dev.cor.examples.embedded;

import java.nio.charset.StandardCharsets;

import dev.cor.base.CorCo;
import dev.cor.ngsild.CorNgsild;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestException;

/**
 * The host's application: the NGSI-LD broker's requests (those {@link CorNgsild#handles} owns:
 * {@code /ngsi-ld/v1/...} and the notifications its sources send it) go to the broker's own
 * application, the rest are the host's:
 * <ul>
 * <li>{@code GET /shop/stock} never waits: it runs inline on the loop and reads the broker's
 * store (how many entities the default tenant holds);</li>
 * <li>{@code GET /shop/slow?ms=N} waits for a deadline: as a coroutine it yields to the loop;</li>
 * <li>{@code GET /shop/legacy} calls a library that blocks (here a sleep stands for it, as a
 * JDBC driver would): it may wait, but never as a coroutine - {@link ShopCoroutineHook} sends it
 * to a worker.</li>
 * </ul>
 * Built once, shared by every loop; it keeps no state of its own.
 */
final class ShopApp implements CorRestApplication {
    static final long MAX_SLOW_MS = 10_000;
    static final long LEGACY_MS = 20;

    private final CorNgsild broker;
    private final CorRestApplication brokerApp;

    ShopApp(CorNgsild broker) {
        this.broker = broker;
        this.brokerApp = broker.application();
    }

    @Override
    public boolean canWait(CorRest request) {
        if (broker.handles(request)) {
            return brokerApp.canWait(request); // only a request whose @context is not cached yet
        }
        return request.path().equals("/shop/slow") || request.path().equals("/shop/legacy");
    }

    @Override
    public boolean finishCanWait(CorRest request) {
        return broker.handles(request) && brokerApp.finishCanWait(request);
    }

    @Override
    public void handle(CorRest request) throws Exception {
        if (broker.handles(request)) {
            brokerApp.handle(request);
            return;
        }
        if (!request.method().equals("GET")) {
            throw new CorRestException(405, "Method Not Allowed", request.path() + " takes GET");
        }
        switch (request.path()) {
            case "/shop/stock" -> json(request, "{\"entities\":" + broker.store().count(EntityStore.DEFAULT_TENANT) + "}");
            case "/shop/slow" -> {
                long ms = slowMs(request);
                CorCo.sleep(ms); // the hook lets it be a coroutine: the loop serves everyone else meanwhile
                json(request, "{\"slept\":" + ms + "}");
            }
            case "/shop/legacy" -> {
                Thread.sleep(LEGACY_MS); // a blocking library: on a worker, never on a loop
                json(request, "{\"legacy\":\"" + Thread.currentThread().getName() + "\"}");
            }
            default -> throw new CorRestException(404, "Not Found", "no resource " + request.path()
                    + " (try /shop/stock, /shop/slow?ms=N, /shop/legacy or /ngsi-ld/v1/entities)");
        }
    }

    private static void json(CorRest request, String body) {
        request.respond(200, "application/json", body.getBytes(StandardCharsets.UTF_8));
    }

    private static long slowMs(CorRest request) {
        String ms = request.queryParam("ms");
        try {
            long v = ms == null ? 0 : Long.parseLong(ms);
            if (v < 0 || v > MAX_SLOW_MS) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new CorRestException(400, "Bad Request", "ms must be a number of milliseconds from 0 to " + MAX_SLOW_MS);
        }
    }
}
