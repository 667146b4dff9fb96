package dev.cor.server;

import java.util.Locale;
import java.util.logging.Level;

import dev.cor.ngsild.store.durable.FsyncPolicy;
import dev.cor.rest.CorArgs;

/**
 * The launcher's flags, parsed once by {@link #parse} on the main thread. Every mistake is an
 * {@link IllegalArgumentException} whose message names the flag and what it takes.
 *
 * @param host           address to bind
 * @param port           HTTP port (0: any free one)
 * @param corPort        {@code cor://} port, or -1 for none
 * @param httpLoops      event loops
 * @param coroutines     live coroutines per loop; 0 turns them off
 * @param workers        worker threads for the hop
 * @param coStackBytes   the loop threads' stack size, or 0 for the JVM's default
 * @param contextTimeout milliseconds a remote {@code @context} may take to download
 * @param notificationTimeout milliseconds a notification may take to be delivered
 * @param notificationQueue notices a subscription may hold while its receiver is busy
 * @param forwardTimeout milliseconds a forward to a context source may take when its registration names no timeout
 * @param brokerId       this broker's name in the Via header of its forwards, or {@code null} for a random one
 * @param maxBodyBytes   largest request body (413 past it)
 * @param logLevel       one of {@link #LOG_LEVELS}
 * @param store          {@code durable} (the default) or {@code memory}
 * @param dataDir        the durable store's data directory
 * @param fsync          the durable store's fsync policy
 * @param snapshotEvery  how many bytes the journal grows between snapshots
 * @param checkData      {@code --check-data DIR}: verify that directory and exit, or {@code null}
 * @param help           {@code --help} was given
 * @param tls            {@code --https --key FILE --cert FILE}, or {@code null} for plain HTTP
 * @param corsOrigin     {@code --corsOrigin}: the one origin a browser may call from, {@link CorsApplication#ALL}, or {@code null} for no CORS
 * @param auth           the authentication flags ({@link AuthFlags})
 * @param drainMs        how long SIGTERM's drain lasts: ready answers 503 and connections are still taken
 * @param logs           {@code --accessLog} and {@code --logFormat} ({@link LogFlags})
 * @param outbound       the outbound connections' flags: trust and address policy ({@link OutboundFlags})
 * @param temporal       the history's flags ({@link TemporalFlags})
 * @param indexes        the value indexes' flags ({@link IndexFlags})
 * @param db             the PostgreSQL store's flags ({@link DatabaseFlags})
 * @param transfer       {@code --import DIR} or {@code --export DIR}: copy between DIR and the database, and exit ({@link DataTransfer})
 */
record ServerOptions(String host, int port, int corPort, int httpLoops, int coroutines, int workers, long coStackBytes,
        int contextTimeout, int notificationTimeout, int notificationQueue, int forwardTimeout, String brokerId, int maxBodyBytes, String logLevel, String store, String dataDir, FsyncPolicy fsync,
        long snapshotEvery, String checkData, boolean help, ServerTls tls, String corsOrigin, AuthFlags auth, int drainMs,
        LogFlags logs, OutboundFlags outbound, TemporalFlags temporal, IndexFlags indexes, DatabaseFlags db,
        DataTransfer transfer) {

    /** The names {@code --logLevel} takes, most to least severe. */
    static final String[] LOG_LEVELS = {"error", "warn", "info", "debug", "trace"};
    static final int DEFAULT_PORT = 1026;
    static final int DEFAULT_MAX_BODY = 1024 * 1024;
    static final long MIN_STACK = 64 * 1024;
    static final long MAX_STACK = 1024L * 1024 * 1024;
    static final long MAX_BODY = 1024L * 1024 * 1024;
    static final String DEFAULT_DATA_DIR = "./cor-data";
    static final long DEFAULT_SNAPSHOT_EVERY = 64L * 1024 * 1024;
    static final long MIN_SNAPSHOT_EVERY = 64L * 1024;
    static final long MAX_SNAPSHOT_EVERY = 1L << 40;
    static final int DEFAULT_DRAIN_MS = 5_000;

    static final String USAGE = """
            usage: java -jar cor-server.jar [flags]        (from a checkout: ./cor run [flags])
            Runs the NGSI-LD broker: the API under /ngsi-ld/v1/, and GET /version, /health, /metrics.
              --port N            HTTP port (default 1026, Orion-LD's; 0 = any free port)
              --host H            address to bind (default 0.0.0.0)
              --corPort N         also serve cor:// on this port, on the same loops (default: off); with
                                  --https it is cors://, TLS with the same key and certificate
              --httpLoops N       event loops (default: one per core)
              --coroutines N      live coroutines per loop; 0 or off: none, every request that can wait
                                  takes the worker hop (default 1024)
              --workers N         worker threads for the hop (default 32)
              --coStack SIZE      stack size of the loop threads, on which coroutines run, e.g. 512k, 2m
                                  (default: the JVM's)
              --contextTimeout MS how long a remote @context may take to download (default 5000)
              --notificationTimeout MS  how long a notification may take to be delivered (default 5000)
              --notificationQueue N  notices a subscription holds while its receiver is busy; past them
                                  they are counted as overflowed (default 1024)
              --forwardTimeout MS how long a forward to a context source may take when its registration
                                  gives no management.timeout (default 5000)
              --brokerId ID       this broker's name in the Via header of its forwards, by which a loop of
                                  brokers is caught (default: a random one per start)
              --maxBody SIZE      largest request body, e.g. 512k, 8m; a larger one is answered 413
                                  (default 1m)
              --logLevel LEVEL    error, warn, info, debug (also each request that takes the worker hop, and
                                  why) or trace (also where each request runs) (default info)
            """ + LogFlags.USAGE + """
              --drainMs MS        on SIGTERM, /health/ready answers 503 and connections are still taken for
                                  MS, then the broker stops; a second SIGTERM, or SIGINT, skips it (default 5000)
              --store S           durable (the default): entities, tenants and hosted @contexts are kept in
                                  --dataDir and survive a restart; memory: kept in memory only;
                                  postgres: kept in the PostgreSQL database --db, which several brokers
                                  may share
              --dataDir DIR       the durable store's directory (default ./cor-data)
              --fsync F           always (default): a write is answered once its journal record is fsynced
                                  (the writes that arrive together share one fsync); interval=MS: once it is
                                  written, with an fsync every MS ms; off: at once, written behind the answer
              --snapshotEvery SIZE  journal growth between two snapshots, e.g. 64m (default 64m)
            """ + DatabaseFlags.USAGE + TemporalFlags.USAGE + IndexFlags.USAGE + """
              --check-data DIR    verify a data directory (as a start would read it) and exit: 0 when a
                                  broker starts on it, 1 when it is damaged
            """ + DataTransfer.USAGE + """
              --https             serve HTTPS (TLS 1.3 and 1.2) on --port, with --key and --cert
              --key FILE          the server's private key, PEM (PKCS#8, or PKCS#1 RSA, or SEC1 EC), unencrypted
              --cert FILE         the server's certificate chain, PEM, its own certificate first
              --corsOrigin O      answer browsers calling from origin O (e.g. https://app.example.com), or from
                                  any with __ALL: preflight OPTIONS answered, NGSI-LD headers exposed (default: no CORS)
            """ + AuthFlags.USAGE + OutboundFlags.USAGE + """
              --help              this text
            Every flag but --help, --check-data, --import and --export may also come from the
            environment: COR_ then the flag's name in upper case, a _ before each capital (--httpLoops:
            COR_HTTP_LOOPS=4); the command line wins over it.""";

    static ServerOptions parse(String[] args) {
        return parse(args, true);
    }

    /**
     * Checks each flag of {@code args} and its value alone, not what flags need of each other
     * ({@code --https} needs {@code --key}): how one environment variable is checked.
     */
    static void checkEach(String[] args) {
        parse(args, false);
    }

    private static ServerOptions parse(String[] args, boolean together) {
        String host = "0.0.0.0";
        int port = DEFAULT_PORT;
        int corPort = -1;
        int loops = Runtime.getRuntime().availableProcessors();
        int coroutines = 1024;
        int workers = 32;
        long coStack = 0;
        int contextTimeout = 5_000;
        int notificationTimeout = 5_000;
        int notificationQueue = 1024;
        int forwardTimeout = 5_000;
        String brokerId = null;
        int maxBody = DEFAULT_MAX_BODY;
        String logLevel = "info";
        String store = "durable";
        String dataDir = DEFAULT_DATA_DIR;
        FsyncPolicy fsync = FsyncPolicy.always();
        long snapshotEvery = DEFAULT_SNAPSHOT_EVERY;
        String checkData = null;
        boolean help = false;
        boolean https = false;
        String key = null;
        String cert = null;
        String corsOrigin = null;
        AuthFlags auth = AuthFlags.NONE;
        int drainMs = DEFAULT_DRAIN_MS;
        LogFlags logs = LogFlags.DEFAULT;
        OutboundFlags outbound = OutboundFlags.NONE;
        TemporalFlags temporal = TemporalFlags.DEFAULT;
        IndexFlags indexes = IndexFlags.DEFAULT;
        DatabaseFlags db = DatabaseFlags.NONE;
        DataTransfer transfer = DataTransfer.NONE;
        CorArgs a = new CorArgs(args);
        for (String flag = a.next(); flag != null; flag = a.next()) {
            switch (flag) {
                case "-h", "--help" -> help = true;
                case "--host" -> host = nonEmpty(flag, a.value());
                case "--port" -> port = a.number(0, 65535);
                case "--corPort" -> corPort = a.number(0, 65535);
                case "--httpLoops" -> loops = a.number(1, 1024);
                case "--coroutines" -> coroutines = coroutines(flag, a.value());
                case "--workers" -> workers = a.number(1, 4096);
                case "--coStack" -> coStack = bytes(flag, a.value(), MIN_STACK, MAX_STACK);
                case "--contextTimeout" -> contextTimeout = a.number(1, 3_600_000);
                case "--notificationTimeout" -> notificationTimeout = a.number(1, 3_600_000);
                case "--notificationQueue" -> notificationQueue = a.number(1, 1_000_000);
                case "--forwardTimeout" -> forwardTimeout = a.number(1, 3_600_000);
                case "--brokerId" -> brokerId = brokerId(flag, a.value());
                case "--maxBody" -> maxBody = (int) bytes(flag, a.value(), 1, MAX_BODY);
                case "--logLevel" -> logLevel = logLevel(flag, a.value());
                case "--store" -> store = store(flag, a.value());
                case "--dataDir" -> dataDir = nonEmpty(flag, a.value());
                case "--fsync" -> fsync = FsyncPolicy.parse(a.value());
                case "--snapshotEvery" -> snapshotEvery = bytes(flag, a.value(), MIN_SNAPSHOT_EVERY, MAX_SNAPSHOT_EVERY);
                case "--check-data" -> checkData = nonEmpty(flag, a.value());
                case "--drainMs" -> drainMs = a.number(0, 3_600_000);
                case "--https" -> https = true;
                case "--key" -> key = nonEmpty(flag, a.value());
                case "--cert" -> cert = nonEmpty(flag, a.value());
                case "--corsOrigin" -> corsOrigin = CorsApplication.origin(flag, a.value());
                case "--accessLog", "--logFormat" -> logs = logs.with(flag, a.value());
                case "--temporal", "--temporalRetention", "--temporalMaxBytes", "--temporalPage" -> temporal = temporal.with(flag, a.value());
                default -> {
                    if (DataTransfer.takes(flag)) {
                        transfer = transfer.with(flag, a.value());
                        continue;
                    }
                    if (DatabaseFlags.takes(flag)) {
                        db = db.with(flag, a.value());
                        continue;
                    }
                    if (IndexFlags.takes(flag)) {
                        indexes = indexes.with(flag, a.value());
                        continue;
                    }
                    if (OutboundFlags.takes(flag)) {
                        outbound = outbound.with(flag, a.value());
                        continue;
                    }
                    if (!AuthFlags.takes(flag)) {
                        throw a.unknown();
                    }
                    auth = auth.with(flag, a.value());
                }
            }
        }
        if (!together) {
            return null;
        }
        if (store.equals("postgres") && temporal.maxBytes() != 0) {
            throw new IllegalArgumentException("--temporalMaxBytes does not go with --store postgres: the history there is kept"
                    + " by age (--temporalRetention), the database's disk is its bound");
        }
        ServerTls tls = ServerTls.of(https, key, cert); // with --corPort, cors:// takes the same key
        return new ServerOptions(host, port, corPort, loops, coroutines, workers, coStack, contextTimeout,
                notificationTimeout, notificationQueue, forwardTimeout, brokerId, maxBody,
                logLevel, store, dataDir, fsync, snapshotEvery, checkData, help, tls, corsOrigin, auth.checked(), drainMs,
                logs, outbound.checked(), temporal, indexes, db.checked(store), transfer.checked(store, checkData));
    }

    /** A {@code --brokerId}: visible ASCII without spaces, commas or quotes (it is one Via entry). */
    private static String brokerId(String flag, String v) {
        if (v.isEmpty() || !v.chars().allMatch(c -> c > 0x20 && c < 0x7F && c != ',' && c != '"')) {
            throw new IllegalArgumentException(flag + " takes visible ASCII without spaces, commas or quotes, not '" + v + "'");
        }
        return v;
    }

    /** The {@code java.util.logging} level of a {@code --logLevel} name (the runtime logs through System.Logger). */
    Level julLevel() {
        return switch (logLevel) {
            case "error" -> Level.SEVERE;
            case "warn" -> Level.WARNING;
            case "debug" -> Level.FINE;
            case "trace" -> Level.FINEST;
            default -> Level.INFO;
        };
    }

    /**
     * A size in bytes: digits with an optional {@code k}, {@code m} or {@code g} (powers of 1024,
     * either case) from {@code min} to {@code max}.
     */
    static long bytes(String flag, String v, long min, long max) {
        String s = v.trim().toLowerCase(Locale.ROOT);
        long unit = 1;
        if (!s.isEmpty()) {
            switch (s.charAt(s.length() - 1)) {
                case 'k' -> unit = 1024;
                case 'm' -> unit = 1024 * 1024;
                case 'g' -> unit = 1024 * 1024 * 1024;
                default -> { }
            }
        }
        String digits = unit == 1 ? s : s.substring(0, s.length() - 1);
        try {
            long n = Long.parseLong(digits);
            if (n >= 0 && n <= max / unit && n * unit >= min) {
                return n * unit;
            }
        } catch (NumberFormatException e) {
            // reported below with the bounds
        }
        throw new IllegalArgumentException(flag + " takes a size from " + size(min) + " to " + size(max)
                + " (bytes, or with k, m or g), not " + v);
    }

    /** {@code n} bytes as a {@code --flag} would be written: 64k, 2m, 1g, or plain bytes. */
    static String size(long n) {
        if (n >= 1024 * 1024 * 1024 && n % (1024 * 1024 * 1024) == 0) {
            return n / (1024 * 1024 * 1024) + "g";
        }
        if (n >= 1024 * 1024 && n % (1024 * 1024) == 0) {
            return n / (1024 * 1024) + "m";
        }
        if (n >= 1024 && n % 1024 == 0) {
            return n / 1024 + "k";
        }
        return Long.toString(n);
    }

    private static String logLevel(String flag, String v) {
        for (String l : LOG_LEVELS) {
            if (l.equalsIgnoreCase(v)) {
                return l;
            }
        }
        throw new IllegalArgumentException(flag + " takes one of " + String.join(", ", LOG_LEVELS) + ", not " + v);
    }

    /** {@code --coroutines}: a number from 0 to 1 000 000, or {@code off} (0). */
    private static int coroutines(String flag, String v) {
        if (v.equals("off")) {
            return 0;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 0 && n <= 1_000_000) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(flag + " takes a number from 0 to 1000000 or off, not " + v);
    }

    static String nonEmpty(String flag, String v) {
        if (v.isBlank()) {
            throw new IllegalArgumentException(flag + " takes " + (flag.equals("--host") ? "an address"
                    : flag.equals("--key") || flag.equals("--cert") ? "a file" : "a directory")
                    + ", not an empty string");
        }
        return v;
    }

    private static String store(String flag, String v) {
        if (v.equals("durable") || v.equals("memory") || v.equals("postgres")) {
            return v;
        }
        throw new IllegalArgumentException(flag + " takes durable, memory or postgres, not " + v);
    }

    /** Whether the broker keeps its data in the PostgreSQL database {@link DatabaseFlags#uri()}. */
    boolean postgres() {
        return store.equals("postgres");
    }

    /** Whether the broker keeps its data in {@link #dataDir()}. */
    boolean durable() {
        return store.equals("durable");
    }
}
