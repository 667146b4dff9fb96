package dev.cor.base;

/**
 * What the shared test helpers ({@code dev.cor.base.testing}) reach inside a loop that the API
 * does not offer. In the loop's package for its package-private members; tests only.
 */
public final class LoopAccess {
    private LoopAccess() {
    }

    /** {@link CorCoLoop#rebuildSelector()}; on the loop's own thread. */
    public static void rebuildSelector(CorCoLoop loop) {
        loop.rebuildSelector();
    }
}
