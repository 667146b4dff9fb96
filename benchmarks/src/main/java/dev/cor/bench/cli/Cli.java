package dev.cor.bench.cli;

import java.util.Arrays;
import java.util.function.Function;

/**
 * The common front of the tools' mains: {@code --help} prints the usage, a bad flag prints
 * {@code tool: reason} and the usage to stderr and exits with status 2. Called by a main only,
 * since it may end the JVM.
 */
public final class Cli {
    /** Exit status for a command line that cannot be used. */
    public static final int USAGE_ERROR = 2;

    private Cli() {
    }

    /**
     * Parses {@code args} with {@code parser}; returns {@code null} after printing the usage for
     * {@code --help} or {@code -h}, so the main just returns.
     */
    public static <T> T parseOrExit(String tool, String usage, String[] args, Function<String[], T> parser) {
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.println(usage);
            return null;
        }
        try {
            return parser.apply(args);
        } catch (IllegalArgumentException e) {
            return fail(tool, e.getMessage(), usage);
        }
    }

    /** Prints {@code tool: message} and the usage to stderr, then exits with {@link #USAGE_ERROR}. */
    public static <T> T fail(String tool, String message, String usage) {
        System.err.println(tool + ": " + message);
        if (usage != null) {
            System.err.println(usage);
        }
        System.exit(USAGE_ERROR);
        return null;
    }
}
