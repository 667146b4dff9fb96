package dev.cor.ngsild.store;

/**
 * How much history a {@link TemporalStore} keeps: instances recorded less than {@link #maxAgeMs}
 * ago, at most {@link #maxBytes} of them (the oldest go first). A store may keep a little more
 * between two {@link TemporalStore#expire} calls, never less.
 *
 * @param maxAgeMs how long an instance is kept after it was recorded; {@link Long#MAX_VALUE}: for ever
 * @param maxBytes how many bytes of instances are kept (as the store counts them: its encoding);
 *                 {@link Long#MAX_VALUE}: no bound
 */
public record TemporalRetention(long maxAgeMs, long maxBytes) {
    /** Everything, for ever: a durable store's default (its disk is the bound). */
    public static final TemporalRetention FOREVER = new TemporalRetention(Long.MAX_VALUE, Long.MAX_VALUE);
    /** The memory store's default: no age, {@value #MEMORY_DEFAULT_BYTES} bytes of heap. */
    public static final long MEMORY_DEFAULT_BYTES = 256L << 20;

    public TemporalRetention {
        if (maxAgeMs <= 0 || maxBytes <= 0) {
            throw new IllegalArgumentException("a retention keeps something: age " + maxAgeMs + " ms, " + maxBytes + " bytes");
        }
    }
}
