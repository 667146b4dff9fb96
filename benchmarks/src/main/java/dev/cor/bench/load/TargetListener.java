package dev.cor.bench.load;

/**
 * Hears the outcome of each request a {@link Target} sends: implemented by the generator
 * ({@link LoadRun}), called by a target on the generator's loop thread only, from inside
 * {@link Target#poll}. A listener may call {@link Target#send} from within.
 */
public interface TargetListener {
    /** The request of {@code caller} got its answer, with {@code status} (an HTTP status code). */
    void answered(int caller, int status);

    /** The request of {@code caller} got no answer: {@code reason} says why (connect, reset, deadline). */
    void failed(int caller, String reason);
}
