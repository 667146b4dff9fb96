package dev.cor.rest.client;

import java.io.IOException;
import java.net.InetAddress;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoCancelledException;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTimeoutException;

/**
 * Turns a host name into an address without ever blocking a loop. A numeric IPv4/IPv6 address
 * and {@code localhost} need no lookup. Any other name is looked up on a helper thread
 * ({@link CorCo#blocking(java.util.concurrent.Callable, long)}) while the coroutine, worker or
 * plain thread that asked waits for it until its deadline, and kept for a time to live. Shared by every thread of a client: the cache is a
 * concurrent map, and no lock is held while a lookup runs.
 */
public final class CorRestResolver {
    /** Default time to live of a looked-up name. */
    public static final long DEFAULT_TTL_MS = 60_000;
    // Bounds the cache against a caller that names a new host on every request.
    private static final int MAX_ENTRIES = 4096;

    /** The blocking lookup of a name (the system's by default); never called on a loop thread. */
    @FunctionalInterface
    public interface Lookup {
        InetAddress[] lookup(String host) throws IOException;
    }

    private final Lookup lookup;
    private final long ttlNanos;
    private final ConcurrentHashMap<String, Entry> cache = new ConcurrentHashMap<>();

    private record Entry(InetAddress address, long expiresNanos) {
    }

    private CorRestResolver(Lookup lookup, long ttlMs) {
        this.lookup = Objects.requireNonNull(lookup, "lookup");
        if (ttlMs < 0) {
            throw new IllegalArgumentException("ttl must be >= 0: " + ttlMs);
        }
        this.ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMs);
    }

    /** The system's lookup ({@link InetAddress#getAllByName}), names kept 60 s. */
    public static CorRestResolver system() {
        return new CorRestResolver(InetAddress::getAllByName, DEFAULT_TTL_MS);
    }

    /** {@code lookup} instead of the system's (a test's), names kept {@code ttlMs}. */
    public static CorRestResolver of(Lookup lookup, long ttlMs) {
        return new CorRestResolver(lookup, ttlMs);
    }

    /**
     * The address of {@code host}, looked up within {@code timeoutMs} - the deadline the caller
     * lives under (a connect timeout). Past it the caller goes on and the lookup's helper thread is
     * interrupted; a lookup that ignores interrupts ends on its own, its answer unused.
     *
     * @param timeoutMs the deadline in milliseconds ({@code 0}: it has passed; the cache and literals still answer)
     * @throws CorRestClientException {@link CorRestClientException.Kind#RESOLVE} when it has none,
     *                                {@link CorRestClientException.Kind#TIMEOUT} past the deadline
     * @throws IllegalStateException  for a name that needs a lookup, on a loop thread outside a coroutine
     */
    public InetAddress resolve(String host, long timeoutMs) throws CorRestClientException {
        InetAddress literal = literal(host);
        if (literal != null) {
            return literal;
        }
        String key = host.toLowerCase(Locale.ROOT);
        Entry e = cache.get(key);
        long now = System.nanoTime();
        if (e != null && now - e.expiresNanos < 0) {
            return e.address;
        }
        InetAddress address = lookUp(key, timeoutMs);
        if (cache.size() >= MAX_ENTRIES) {
            cache.clear();
        }
        cache.put(key, new Entry(address, System.nanoTime() + ttlNanos));
        return address;
    }

    private InetAddress lookUp(String host, long timeoutMs) throws CorRestClientException {
        CorCoLoop loop = CorCoLoop.current();
        if (loop != null && CorCo.current() == null) {
            throw new IllegalStateException("a lookup of " + host + " on loop thread " + loop.name()
                    + " outside a coroutine: a loop never blocks (run the request as a coroutine or on a worker)");
        }
        InetAddress[] all;
        try {
            // on a helper thread, the coroutine or plain thread waiting for it until the deadline
            all = CorCo.blocking(() -> lookup.lookup(host), Math.max(0, timeoutMs));
        } catch (CorCoCancelledException | CorRestClientException e) {
            throw e;
        } catch (CorCoTimeoutException e) {
            throw new CorRestClientException(CorRestClientException.Kind.TIMEOUT,
                    "the lookup of " + host + " did not finish within " + timeoutMs + " ms", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CorRestClientException(CorRestClientException.Kind.RESOLVE, "lookup of " + host + " interrupted", e);
        } catch (Exception e) {
            throw new CorRestClientException(CorRestClientException.Kind.RESOLVE,
                    "cannot resolve " + host + ": " + e.getMessage(), e);
        }
        if (all == null || all.length == 0 || all[0] == null) {
            throw new CorRestClientException(CorRestClientException.Kind.RESOLVE, "cannot resolve " + host + ": no address");
        }
        return all[0];
    }

    /** The address a host names by itself - a numeric address or {@code localhost} - or {@code null}. */
    static InetAddress literal(String host) {
        if (host.equalsIgnoreCase("localhost")) {
            return InetAddress.getLoopbackAddress();
        }
        boolean maybe = host.indexOf(':') >= 0;
        if (!maybe) {
            maybe = true;
            for (int i = 0; i < host.length(); i++) {
                char c = host.charAt(i);
                if (!((c >= '0' && c <= '9') || c == '.')) {
                    maybe = false;
                    break;
                }
            }
        }
        if (!maybe) {
            return null;
        }
        try {
            // ofLiteral parses only: it never asks a name service
            return InetAddress.ofLiteral(host);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
