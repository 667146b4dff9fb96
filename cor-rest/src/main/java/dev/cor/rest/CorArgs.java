package dev.cor.rest;

/**
 * Command-line flags for host applications and the launcher: {@code --name value} pairs read in
 * order, every number bounded, every mistake a clear {@link IllegalArgumentException}. One
 * instance per parse, on one thread.
 */
public final class CorArgs {
    private final String[] args;
    private int i = -1;

    public CorArgs(String[] args) {
        this.args = args.clone();
    }

    /** Moves to the next flag; {@code null} when there is none. */
    public String next() {
        return ++i < args.length ? args[i] : null;
    }

    /** The value after the current flag. */
    public String value() {
        String flag = args[i];
        if (++i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    /** The value after the current flag, as a number from {@code min} to {@code max}. */
    public int number(int min, int max) {
        String flag = args[i];
        String v = value();
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " takes a number from " + min + " to " + max + ", not " + v);
        }
    }

    /** The error for a flag nobody knows. */
    public IllegalArgumentException unknown() {
        return new IllegalArgumentException("unknown option " + args[i]);
    }
}
