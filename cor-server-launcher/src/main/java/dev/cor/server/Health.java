package dev.cor.server;

import java.nio.charset.StandardCharsets;
import java.util.List;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.base.CorCoLoop;
import dev.cor.ngsild.store.durable.DurableEntityStore;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestJson;

/**
 * The launcher's probes. {@code /health/live}: the process works - 503 only when one of its loops
 * is stalled past its watchdog threshold or has ended while the server was not stopping (a
 * restart is the cure). {@code /health/ready}: it can serve and write - 503 while starting, once
 * stopping (from SIGTERM on, through the drain), and while the durable store cannot write (reads
 * are still served; a load balancer sends elsewhere, a liveness probe leaves it alone).
 * {@code /health} answers what {@code /health/ready} does, as it always has. Answered inline on
 * the loop that read the probe; the state is set by the thread that starts and stops the server.
 */
final class Health {
    static final String HEALTH = "/health";
    static final String LIVE = "/health/live";
    static final String READY = "/health/ready";

    private static final byte[] OK = "{\"status\":\"ok\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STARTING = "{\"status\":\"starting\"}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STOPPING = "{\"status\":\"stopping\"}".getBytes(StandardCharsets.US_ASCII);

    private enum Phase { STARTING, SERVING, STOPPING }

    /** The durable store, or {@code null}: its disk's state is part of the readiness. */
    private final DurableEntityStore store;
    /** The store, whose database (when it has one) must be reachable for the broker to be ready. */
    private final dev.cor.ngsild.store.EntityStore entities;
    private volatile Phase phase = Phase.STARTING;
    private volatile List<CorCoLoop> loops = List.of();

    Health(DurableEntityStore store, dev.cor.ngsild.store.EntityStore entities) {
        this.store = store;
        this.entities = entities;
    }

    static boolean owns(String path) {
        return path.equals(HEALTH) || path.equals(LIVE) || path.equals(READY);
    }

    /** Everything is started: ready from now on (while the store writes); {@code loops} are watched for liveness. */
    void serving(List<CorCoLoop> loops) {
        this.loops = List.copyOf(loops);
        if (phase == Phase.STARTING) {
            phase = Phase.SERVING;
        }
    }

    /** From now on not ready: the server is going away (a load balancer stops sending). */
    void stopping() {
        phase = Phase.STOPPING;
    }

    void answer(CorRest request) {
        if (request.path().equals(LIVE)) {
            live(request);
        } else {
            ready(request);
        }
    }

    private void live(CorRest request) {
        String broken = broken();
        if (broken == null) {
            request.respond(200, "application/json", OK);
        } else {
            request.respondJson(503, status("broken", broken));
        }
    }

    /** Why the process does not work (a loop stalled, or ended while serving), or {@code null}. */
    private String broken() {
        boolean stopping = phase == Phase.STOPPING;
        for (CorCoLoop l : loops) {
            long stalled = l.stalledMs();
            if (stalled > 0) {
                return "loop " + l.name() + " has not come back to select for " + stalled + " ms";
            }
            if (!stopping && l.isTerminated()) {
                return "loop " + l.name() + " has ended";
            }
        }
        return null;
    }

    private void ready(CorRest request) {
        switch (phase) {
            case STARTING -> request.respond(503, "application/json", STARTING);
            case STOPPING -> request.respond(503, "application/json", STOPPING);
            default -> {
                String problem = store == null ? null : store.problem();
                if (entities != null && !entities.ready()) {
                    request.respondJson(503, status("unavailable", "the database cannot be reached: requests that touch it"
                            + " answer 503 until it can"));
                } else if (problem == null) {
                    request.respond(200, "application/json", OK);
                } else {
                    request.respondJson(503, status("degraded",
                            "writes are refused (503) while " + problem + "; reads are served"));
                }
            }
        }
    }

    private static ObjectNode status(String status, String detail) {
        ObjectNode h = CorRestJson.mapper().createObjectNode();
        h.put("status", status);
        h.put("detail", detail);
        return h;
    }
}
