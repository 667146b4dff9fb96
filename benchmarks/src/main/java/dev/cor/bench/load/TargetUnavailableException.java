package dev.cor.bench.load;

/** A URL whose protocol this build of the generator cannot drive (for now: {@code cor://}). */
public final class TargetUnavailableException extends Exception {
    public TargetUnavailableException(String message) {
        super(message);
    }
}
