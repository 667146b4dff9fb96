package dev.cor.ngsild.ld;

import java.util.function.BiConsumer;

/**
 * What keeps processed {@code @context}s beyond a request - the subscriptions, the subscriptions to
 * registrations, the registrations - seen from the context service: the contexts they rely on, so
 * that a context they name or link stays served ({@link LdContexts} neither evicts the
 * ImplicitlyCreated ones among them nor lets a client delete a stored one they use). Registered
 * once, when the broker is built ({@link LdContexts#holders}); called from any loop or worker
 * whenever the service must know, so it must be quick and must not wait.
 */
@FunctionalInterface
public interface ContextHolders {
    /**
     * Calls {@code each} with every context held and the tenant that holds it ({@code null} for the
     * default tenant), as {@link LdContexts#linkUrlFor} is given it.
     */
    void forEach(BiConsumer<String, LdContext> each);
}
