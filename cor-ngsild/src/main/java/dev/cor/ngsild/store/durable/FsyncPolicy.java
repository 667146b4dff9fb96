package dev.cor.ngsild.store.durable;

/**
 * When the journal makes its appends durable, and so what a write's answer waits for:
 * <ul>
 * <li>{@link #always()} (the default): the answer waits for the {@code fsync} that covers its
 * record - nothing acknowledged is lost, even to a power failure. The writes that arrive together
 * share one {@code fsync} (group commit).</li>
 * <li>{@link #interval(long) interval=MS}: the answer waits until its record is written to the
 * operating system (it survives the process: a crash, {@code kill -9}); an {@code fsync} runs
 * every MS milliseconds, so a power failure loses at most the last MS.</li>
 * <li>{@link #off()}: the answer waits for nothing; the journal writes behind it. A crash loses
 * the records not yet written (a few milliseconds of them), a power failure what the operating
 * system had not written.</li>
 * </ul>
 *
 * @param mode       which of the three
 * @param intervalMs the interval of {@link Mode#INTERVAL}, else 0
 */
public record FsyncPolicy(Mode mode, long intervalMs) {
    /** The three policies. */
    public enum Mode {
        ALWAYS, INTERVAL, OFF
    }

    /** An interval of 1 ms to 1 h for {@code INTERVAL}, none for the others. */
    public FsyncPolicy {
        if (mode == Mode.INTERVAL ? intervalMs < 1 || intervalMs > 3_600_000 : intervalMs != 0) {
            throw new IllegalArgumentException("an fsync interval is 1 to 3600000 ms (interval only): " + intervalMs);
        }
    }

    /** Every answer waits for the fsync that covers its record (the default). */
    public static FsyncPolicy always() {
        return new FsyncPolicy(Mode.ALWAYS, 0);
    }

    /** The journal is forced every {@code ms}; an answer waits for its write, not for the force. */
    public static FsyncPolicy interval(long ms) {
        return new FsyncPolicy(Mode.INTERVAL, ms);
    }

    /** The operating system decides when the journal reaches the disk. */
    public static FsyncPolicy off() {
        return new FsyncPolicy(Mode.OFF, 0);
    }

    /** {@code always}, {@code off} or {@code interval=MS}, as the launcher's {@code --fsync} takes it. */
    public static FsyncPolicy parse(String s) {
        if (s.equals("always")) {
            return always();
        }
        if (s.equals("off")) {
            return off();
        }
        if (s.startsWith("interval=")) {
            try {
                return interval(Long.parseLong(s.substring("interval=".length())));
            } catch (IllegalArgumentException e) {
                // said below
            }
        }
        throw new IllegalArgumentException("--fsync takes always, off or interval=MS (1 to 3600000), not " + s);
    }

    /** Whether a write's answer waits for the journal. */
    boolean waits() {
        return mode != Mode.OFF;
    }

    @Override
    public String toString() {
        return mode == Mode.INTERVAL ? "interval=" + intervalMs : mode.name().toLowerCase(java.util.Locale.ROOT);
    }
}
