package dev.cor.bench.netty;

import java.util.HashSet;
import java.util.Set;

import dev.cor.bench.cli.Flags;

/**
 * The flags every Netty peer takes - {@code --host} (default 127.0.0.1), {@code --port}
 * (default 8080, 0 = any free port), {@code --threads} (event loops, default 1) - and the
 * parsed flags for the peer's own extras. Built by the peers' mains.
 */
record PeerOptions(String host, int port, int threads, Flags flags) {
    static final int MAX_THREADS = 256;

    /** Parses the common flags plus the peer's {@code extraValued} and {@code extraSwitches}. */
    static PeerOptions parse(String[] args, Set<String> extraValued, Set<String> extraSwitches) {
        Set<String> valued = new HashSet<>(extraValued);
        valued.addAll(Set.of("host", "port", "threads"));
        Flags f = Flags.parse(args, valued, extraSwitches);
        return new PeerOptions(f.string("host", "127.0.0.1"), f.integer("port", 8080, 0, 65535),
                f.integer("threads", 1, 1, MAX_THREADS), f);
    }
}
