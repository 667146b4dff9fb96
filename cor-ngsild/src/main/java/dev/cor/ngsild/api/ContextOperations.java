package dev.cor.ngsild.api;

import dev.cor.ngsild.api.NgsildApplication.Config;

/**
 * The context-source operations (ETSI GS CIM 009 § 5.13; resources 6.27-6.30): list, add, serve
 * and delete the {@code @context}s the broker holds, served from its {@code @context} service.
 */
final class ContextOperations {
    private final NgsildApplication app;
    private final Config config;

    ContextOperations(NgsildApplication app, Config config) {
        this.app = app;
        this.config = config;
    }

    void run(Exchange x) {
        throw new NgsiLdException(ErrorType.NOT_IMPLEMENTED, "the /jsonldContexts resources are not served yet");
    }
}
