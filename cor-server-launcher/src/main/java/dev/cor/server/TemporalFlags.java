package dev.cor.server;

import java.util.Locale;

import dev.cor.ngsild.policy.NgsildLimits;
import dev.cor.ngsild.store.TemporalRetention;

/**
 * The history's flags: {@code --temporal on|off} (whether every write's history is kept and the
 * temporal API served), {@code --temporalRetention AGE} (how long an instance is kept after it
 * was recorded) and {@code --temporalMaxBytes SIZE} (how many bytes of history are kept, the
 * oldest dropped first) and {@code --temporalPage N} (how many instances one temporal answer
 * carries before it is a 206, § 6.3.10). Parsed with the other flags on the main thread.
 *
 * @param on       {@code --temporal on} (the default)
 * @param maxAgeMs the age kept, milliseconds; {@link Long#MAX_VALUE}: for ever
 * @param maxBytes the bytes kept; {@code 0}: the store's default (the memory store's
 *                 {@value TemporalRetention#MEMORY_DEFAULT_BYTES}, the durable store's disk)
 * @param page     the most instances a temporal answer carries
 */
record TemporalFlags(boolean on, long maxAgeMs, long maxBytes, int page) {
    static final TemporalFlags DEFAULT = new TemporalFlags(true, Long.MAX_VALUE, 0, NgsildLimits.DEFAULT_TEMPORAL_INSTANCES);
    static final long MAX_BYTES = 1L << 50;

    /** The flags' lines of {@code --help}, indented as the others. */
    static final String USAGE = """
              --temporal on|off   keep the history of every write and serve the temporal API
                                  (/ngsi-ld/v1/temporal/...) (default on); off answers it 501
              --temporalRetention AGE  how long a history instance is kept after it was recorded,
                                  e.g. 30d, 12h, 90m (default: for ever)
              --temporalMaxBytes SIZE  how much history is kept, the oldest dropped first, e.g. 512m, 50g
                                  (default: 256m with --store memory, the disk with durable)
              --temporalPage N    the most attribute instances one temporal answer carries; past
                                  them it is a 206 with a Content-Range (default 10000)""".indent(2);

    /** Whether {@code flag} is one of these. */
    static boolean takes(String flag) {
        return flag.equals("--temporal") || flag.equals("--temporalRetention") || flag.equals("--temporalMaxBytes")
                || flag.equals("--temporalPage");
    }

    /** These flags with {@code flag} set to {@code value}. */
    TemporalFlags with(String flag, String value) {
        return switch (flag) {
            case "--temporal" -> switch (value) {
                case "on" -> new TemporalFlags(true, maxAgeMs, maxBytes, page);
                case "off" -> new TemporalFlags(false, maxAgeMs, maxBytes, page);
                default -> throw new IllegalArgumentException(flag + " takes on or off, not " + value);
            };
            case "--temporalRetention" -> new TemporalFlags(on, age(flag, value), maxBytes, page);
            case "--temporalMaxBytes" -> new TemporalFlags(on, maxAgeMs, ServerOptions.bytes(flag, value, 1024 * 1024, MAX_BYTES),
                    page);
            case "--temporalPage" -> new TemporalFlags(on, maxAgeMs, maxBytes, page(flag, value));
            default -> throw new IllegalArgumentException(flag);
        };
    }

    /** A page of instances: 1 to 1 000 000. */
    private static int page(String flag, String v) {
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 1 && n <= 1_000_000) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(flag + " takes a number of instances from 1 to 1000000, not " + v);
    }

    /** The retention of a store whose default byte bound is {@code defaultBytes}. */
    TemporalRetention retention(long defaultBytes) {
        return new TemporalRetention(maxAgeMs, maxBytes == 0 ? defaultBytes : maxBytes);
    }

    /** An age: digits and a unit, s, m, h or d (1 s to 100 years). */
    static long age(String flag, String v) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        if (s.length() >= 2) {
            long unit = switch (s.charAt(s.length() - 1)) {
                case 's' -> 1_000L;
                case 'm' -> 60_000L;
                case 'h' -> 3_600_000L;
                case 'd' -> 86_400_000L;
                default -> 0;
            };
            try {
                long n = Long.parseLong(s.substring(0, s.length() - 1));
                if (unit > 0 && n >= 1 && n <= 36_500L * 86_400_000L / unit) {
                    return n * unit;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
        }
        throw new IllegalArgumentException(flag + " takes an age from 1s to 36500d (digits and s, m, h or d), not " + v);
    }
}
