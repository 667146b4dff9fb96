package dev.cor.bench.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The command-line flags of one tool of {@code benchmarks.jar}: {@code --name value},
 * {@code --name=value} and bare switches, checked against the names the tool declares. Each
 * getter validates its value and bounds and throws {@link FlagException} with a message meant
 * for the person who typed it. The mains of the Netty peers and of the load generator parse
 * their arguments through it; nothing else should.
 */
public final class Flags {
    private final Map<String, List<String>> values;
    private final Set<String> switchesGiven;

    private Flags(Map<String, List<String>> values, Set<String> switchesGiven) {
        this.values = values;
        this.switchesGiven = switchesGiven;
    }

    /**
     * Parses {@code args}. {@code valued} names the flags that take a value, {@code switches}
     * those that take none (names without the leading dashes).
     *
     * @throws FlagException on an unknown flag, a missing value or a value given to a switch
     */
    public static Flags parse(String[] args, Set<String> valued, Set<String> switches) {
        Map<String, List<String>> values = new LinkedHashMap<>();
        Set<String> given = new java.util.HashSet<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--") || arg.length() == 2) {
                throw new FlagException("unexpected argument '" + arg + "' (flags start with --)");
            }
            String name = arg.substring(2);
            String inline = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                inline = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (switches.contains(name)) {
                if (inline != null) {
                    throw new FlagException("--" + name + " takes no value");
                }
                given.add(name);
            } else if (valued.contains(name)) {
                String value = inline;
                if (value == null) {
                    if (i + 1 >= args.length) {
                        throw new FlagException("--" + name + " needs a value");
                    }
                    value = args[++i];
                }
                values.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
            } else {
                throw new FlagException("unknown flag --" + name);
            }
        }
        return new Flags(values, given);
    }

    /** Whether the switch (or valued flag) was given. */
    public boolean has(String name) {
        return switchesGiven.contains(name) || values.containsKey(name);
    }

    /** Every value of a repeatable flag, in order; empty when not given. */
    public List<String> all(String name) {
        return List.copyOf(values.getOrDefault(name, List.of()));
    }

    /** The one value of {@code name}, or {@code fallback} when not given. */
    public String string(String name, String fallback) {
        List<String> v = values.get(name);
        if (v == null) {
            return fallback;
        }
        if (v.size() > 1) {
            throw new FlagException("--" + name + " given " + v.size() + " times; it takes one value");
        }
        return v.getFirst();
    }

    /** The one value of a required flag. */
    public String required(String name) {
        String v = string(name, null);
        if (v == null) {
            throw new FlagException("--" + name + " is required");
        }
        return v;
    }

    /** A whole number within {@code [min, max]}. */
    public long number(String name, long fallback, long min, long max) {
        String v = string(name, null);
        if (v == null) {
            return fallback;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below with the bounds
        }
        throw new FlagException("--" + name + " takes a whole number from " + min + " to " + max + ", not '" + v + "'");
    }

    /** {@link #number} for an int. */
    public int integer(String name, int fallback, int min, int max) {
        return (int) number(name, fallback, min, max);
    }

    /** A decimal number within {@code [min, max]}, or {@code fallback} (may be NaN) when not given. */
    public double decimal(String name, double fallback, double min, double max) {
        String v = string(name, null);
        if (v == null) {
            return fallback;
        }
        try {
            double d = Double.parseDouble(v.trim());
            if (d >= min && d <= max) {
                return d;
            }
        } catch (NumberFormatException e) {
            // reported below with the bounds
        }
        throw new FlagException("--" + name + " takes a number from " + min + " to " + max + ", not '" + v + "'");
    }

    /** A flag value that cannot be used; its message says which and why. */
    public static final class FlagException extends IllegalArgumentException {
        public FlagException(String message) {
            super(message);
        }
    }
}
