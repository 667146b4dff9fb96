package dev.cor.server;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.cor.ngsild.KeepAliveHttp;

/**
 * The mixed load of a soak, against a broker at {@code base}: paced workers, each on its own
 * thread and its own connections, at fixed rates (so that two runs, and two brokers, get the same
 * work whatever their speed):
 * <ul>
 * <li>writers: creates, partial attribute updates, attribute updates, appends and deletes of their
 *     own {@value #TYPE} entities (one writer per entity, so the last acknowledged state of each is
 *     known), in plain JSON, with a {@code Link} to the test's context server, or as ld+json with a
 *     small inline {@code @context} of their own;</li>
 * <li>readers: GET by id, {@code q} queries, {@code POST /entityOperations/query} with a distinct
 *     small inline {@code @context} each time;</li>
 * <li>a hostile client: distinct large inline {@code @context}s (thousands of terms, hundreds of
 *     kB) in queries and in writes of its own entities; reads whose {@code Link} names a context
 *     that is slow, hung, refused, over the size limit, an error or garbage; and a regular
 *     expression that backtracks without bound ({@code ~=}) against a value of {@value #BLOB_BYTES} bytes
 *     (the broker must take a body that large: {@code --maxBody 4m}).</li>
 * </ul>
 * Every answer is counted: expected ones (including the refusals a hostile request must get) as
 * requests done, anything else - an unexpected status, a broken connection, a timeout - as an
 * error of its kind. Every context the load sends maps its terms as the core context does
 * ({@code @vocab}), so that every variant writes and reads the same attributes.
 * <p>
 * {@link #start} and {@link #stop} in turns, from one thread (a warm-up, then the soak: the
 * entities stay as the last run left them); the counters may be read from any thread at any time.
 */
final class SoakLoad {
    static final String TYPE = "SoakThing";
    static final String BLOB_TYPE = "SoakBlob";
    static final String BLOB_ID = "urn:ngsi-ld:SoakBlob:1";
    /**
     * The length of the value the backtracking pattern runs against: long enough that a match
     * budget growing with the input (the broker's was 10 000 + 100 per character) lets one query
     * hold its loop for seconds on any machine, where an absolute budget ends it in milliseconds.
     */
    static final int BLOB_BYTES = 3_000_000;
    private static final String VOCAB = "https://uri.etsi.org/ngsi-ld/default-context/";
    private static final String LINK_REL = "rel=\"http://www.w3.org/ns/json-ld#context\"; type=\"application/ld+json\"";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private static final int HOSTILE_ENTITIES = 20;

    /** The test's context server: the paths {@link #contextReply} answers. */
    static final String OK_CONTEXT = "/ok/soak.jsonld";

    /** How many of each worker, and how often each one acts. */
    record Rates(int writers, int entitiesPerWriter, long writeEveryMs, int readers, long readEveryMs,
            long largeQueryEveryMs, long largeWriteEveryMs, int largeQueryTerms, int largeWriteTerms,
            long hostileLinkEveryMs, int regexClients, long regexEveryMs) {
        /**
         * The soak's mix: ~30 writes/s on 300 entities, ~25 reads/s, a query with a distinct inline
         * context of ~350 kB (8 000 terms) every 3 s and a write with one of ~90 kB (2 000 terms)
         * every 3 s, a Link to a hostile context every 0.5 s, the backtracking pattern every 5 s.
         */
        static Rates standard() {
            return new Rates(4, 75, 125, 3, 120, 3_000, 3_000, 8_000, 2_000, 500, 1, 5_000);
        }

        /**
         * These rates without some of the hostile parts ({@code large-contexts}, {@code hostile-links},
         * {@code regex}): to find which part a failing soak owes its failure to.
         */
        Rates without(Set<String> parts) {
            boolean large = !parts.contains("large-contexts");
            return new Rates(writers, entitiesPerWriter, writeEveryMs, readers, readEveryMs, large ? largeQueryEveryMs : 0,
                    large ? largeWriteEveryMs : 0, largeQueryTerms, largeWriteTerms,
                    parts.contains("hostile-links") ? 0 : hostileLinkEveryMs, parts.contains("regex") ? 0 : regexClients, regexEveryMs);
        }
    }

    /** What the load knows of an entity: the value of {@code n} it last wrote, absent, or unknown (its answer was lost). */
    private static final Integer ABSENT = Integer.MIN_VALUE;
    private static final Integer UNKNOWN = Integer.MIN_VALUE + 1;

    private final URI base;
    private final HostilePeer contexts;
    private final int refusingPort;
    private final Rates rates;
    private final long seed;
    private final List<Thread> threads = new ArrayList<>();
    private final List<KeepAliveHttp> clients = new ArrayList<>();
    private final Map<String, Integer> known = new ConcurrentHashMap<>();
    private final LongAdder done = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
    private final AtomicLong nonces = new AtomicLong();
    private volatile boolean stopping;
    private boolean started;
    private int starts;

    SoakLoad(URI base, HostilePeer contexts, int refusingPort, Rates rates, long seed) {
        this.base = base;
        this.contexts = contexts;
        this.refusingPort = refusingPort;
        this.rates = rates;
        this.seed = seed;
    }

    // ---------------------------------------------------------------- the context server

    /**
     * What the test's context server answers: {@link #OK_CONTEXT} the soak's small context;
     * {@code /slow/} after 0-3 s; {@code /hang/} never; {@code /huge/} 6 MiB (over the broker's
     * 4 MiB limit for a document); {@code /error/} a 500; {@code /garbage/} bytes that are no HTTP;
     * {@code /notjson/} a 200 whose body is no JSON.
     */
    static HostilePeer.Reply contextReply(HostilePeer.Request r, Random rnd) {
        String p = r.path();
        if (p.equals(OK_CONTEXT)) {
            return HostilePeer.Answer.json(context(0, "ok"));
        } else if (p.startsWith("/slow/")) {
            return HostilePeer.Answer.json(context(50, p)).after(rnd.nextInt(3_000));
        } else if (p.startsWith("/hang/")) {
            return new HostilePeer.Hang();
        } else if (p.startsWith("/huge/")) {
            return HostilePeer.Answer.json(Huge.DOCUMENT);
        } else if (p.startsWith("/error/")) {
            return HostilePeer.Answer.of(500);
        } else if (p.startsWith("/garbage/")) {
            return new HostilePeer.Garbage();
        } else if (p.startsWith("/notjson/")) {
            return new HostilePeer.Answer(200, "application/ld+json", "eyJhbGciOi not json".getBytes(StandardCharsets.US_ASCII), 0);
        }
        return HostilePeer.Answer.of(404);
    }

    /** A document over the broker's limit, made once. */
    private static final class Huge {
        static final String DOCUMENT = context(120_000, "huge");
    }

    /** A {@code {"@context": ...}} document: the soak's mapping and {@code terms} terms of its own ({@code tag} makes them distinct). */
    static String context(int terms, String tag) {
        return "{\"@context\": " + inlineContext(terms, tag) + "}";
    }

    /** The value of an {@code @context}: {@code @vocab} as the core context has it, and {@code terms} filler terms. */
    static String inlineContext(int terms, String tag) {
        StringBuilder sb = new StringBuilder(64 + terms * 56);
        sb.append("{\"@vocab\": \"").append(VOCAB).append('"');
        String t = Integer.toHexString(tag.hashCode()) + Long.toHexString(tag.length());
        for (int i = 0; i < terms; i++) {
            sb.append(",\"f").append(t).append('_').append(i).append("\": \"https://soak.test/").append(tag).append("/term/")
                    .append(i).append('"');
        }
        return sb.append('}').toString();
    }

    // ---------------------------------------------------------------- running

    /**
     * Starts every worker (again after a {@link #stop}: the entities as they were left). The first
     * start creates {@link #BLOB_ID}.
     */
    void start() throws Exception {
        stopping = false;
        if (!started) {
            started = true;
            createBlob();
            for (int w = 0; w < rates.writers(); w++) {
                for (int k = 0; k < rates.entitiesPerWriter(); k++) {
                    known.put(writerEntity(w, k), ABSENT);
                }
            }
            for (int k = 0; k < HOSTILE_ENTITIES; k++) {
                known.put(hostileEntity(k), ABSENT);
            }
        }
        Random seeds = new Random(seed + starts++);
        for (int w = 0; w < rates.writers(); w++) {
            List<String> ids = new ArrayList<>();
            for (int k = 0; k < rates.entitiesPerWriter(); k++) {
                ids.add(writerEntity(w, k));
            }
            worker("writer-" + w, rates.writeEveryMs(), seeds.nextLong(), (c, rnd) -> write(c, rnd, ids));
        }
        for (int r = 0; r < rates.readers(); r++) {
            worker("reader-" + r, rates.readEveryMs(), seeds.nextLong(), this::read);
        }
        List<String> hostileIds = new ArrayList<>();
        for (int k = 0; k < HOSTILE_ENTITIES; k++) {
            hostileIds.add(hostileEntity(k));
        }
        if (rates.largeQueryEveryMs() > 0) {
            worker("large-query", rates.largeQueryEveryMs(), seeds.nextLong(), this::largeInlineQuery);
        }
        if (rates.largeWriteEveryMs() > 0) {
            worker("large-write", rates.largeWriteEveryMs(), seeds.nextLong(), (c, rnd) -> largeInlineWrite(c, rnd, hostileIds));
        }
        if (rates.hostileLinkEveryMs() > 0) {
            worker("hostile-link", rates.hostileLinkEveryMs(), seeds.nextLong(), this::hostileLink);
        }
        for (int r = 0; r < rates.regexClients(); r++) {
            worker("regex-" + r, rates.regexEveryMs(), seeds.nextLong(), this::regex);
        }
    }

    private static String writerEntity(int w, int k) {
        return "urn:ngsi-ld:" + TYPE + ":w" + w + "-" + k;
    }

    private static String hostileEntity(int k) {
        return "urn:ngsi-ld:" + TYPE + ":h-" + k;
    }

    private void createBlob() throws Exception {
        HttpResponse<String> r;
        try (KeepAliveHttp c = newClient()) {
            r = c.sendString(json("POST", "/entities", "{\"id\": \"" + BLOB_ID + "\", \"type\": \"" + BLOB_TYPE
                    + "\", \"blob\": {\"type\": \"Property\", \"value\": \"" + "a".repeat(BLOB_BYTES) + "\"}}").build());
        }
        if (r.statusCode() != 201) {
            throw new AssertionError("the blob entity: " + r.statusCode() + " " + r.body());
        }
    }

    /** Stops every worker, waits for each one's request in flight, and closes their connections. */
    void stop() throws InterruptedException {
        stopping = true;
        for (Thread t : threads) {
            t.join(REQUEST_TIMEOUT.toMillis() * 2);
            if (t.isAlive()) {
                throw new AssertionError(t.getName() + " did not stop");
            }
        }
        threads.clear();
        synchronized (clients) {
            for (KeepAliveHttp c : clients) {
                c.close();
            }
            clients.clear();
        }
    }

    private interface Op {
        void run(KeepAliveHttp c, Random rnd) throws Exception;
    }

    /** A thread that runs {@code op} every {@code everyMs} (at once when it is behind), on a client of its own. */
    private void worker(String name, long everyMs, long workerSeed, Op op) {
        KeepAliveHttp c = client();
        Random rnd = new Random(workerSeed);
        Thread t = Thread.ofPlatform().daemon().name("soak-" + name).unstarted(() -> {
            long next = System.nanoTime();
            while (!stopping) {
                try {
                    op.run(c, rnd);
                } catch (InterruptedException e) {
                    return;
                } catch (Exception e) {
                    error(name + " " + e.getClass().getSimpleName());
                }
                next += TimeUnit.MILLISECONDS.toNanos(everyMs);
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    try {
                        TimeUnit.NANOSECONDS.sleep(wait); // the pace of the load, not an outcome
                    } catch (InterruptedException e) {
                        return;
                    }
                } else {
                    next = System.nanoTime();
                }
            }
        });
        threads.add(t);
        t.start();
    }

    /** A client of the load's, closed by {@link #stop}. */
    private KeepAliveHttp client() {
        KeepAliveHttp c = newClient();
        synchronized (clients) {
            clients.add(c);
        }
        return c;
    }

    private static KeepAliveHttp newClient() {
        return new KeepAliveHttp();
    }

    // ---------------------------------------------------------------- the operations

    /**
     * One write of one of the writer's entities: a create when it is absent, an upsert when its
     * last write's answer was lost, else a partial attribute update, an attribute update, an
     * append or (one in twenty) a delete.
     */
    private void write(KeepAliveHttp c, Random rnd, List<String> ids) throws Exception {
        String id = ids.get(rnd.nextInt(ids.size()));
        Integer was = known.get(id);
        int n = rnd.nextInt(1_000_000);
        String op;
        HttpRequest.Builder b;
        Set<Integer> expected;
        if (was.equals(ABSENT)) {
            op = "create";
            b = variant("POST", "/entities", "{\"id\": \"" + id + "\", \"type\": \"" + TYPE + "\", " + property("n", n) + "}", rnd);
            expected = Set.of(201);
        } else if (was.equals(UNKNOWN)) {
            op = "upsert";
            b = json("POST", "/entityOperations/upsert", "[{\"id\": \"" + id + "\", \"type\": \"" + TYPE + "\", "
                    + property("n", n) + "}]");
            expected = Set.of(201, 204);
        } else {
            int kind = rnd.nextInt(20);
            expected = Set.of(204);
            if (kind == 0) {
                op = "delete";
                b = request("/entities/" + id).DELETE();
            } else if (kind < 8) {
                op = "partial-update";
                b = variant("PATCH", "/entities/" + id + "/attrs/n", "{\"type\": \"Property\", \"value\": " + n + "}", rnd);
            } else if (kind < 14) {
                op = "update";
                b = variant("PATCH", "/entities/" + id + "/attrs", "{" + property("n", n) + "}", rnd);
            } else {
                op = "append";
                b = variant("POST", "/entities/" + id + "/attrs", "{" + property("n", n) + ", " + property("a" + rnd.nextInt(5), n)
                        + "}", rnd);
            }
        }
        int status = send(c, op, b, expected);
        if (expected.contains(status)) {
            known.put(id, op.equals("delete") ? ABSENT : n);
        } else {
            known.put(id, UNKNOWN); // not checked until a write of it is acknowledged again; the error is counted
        }
    }

    /** A write in one of three ways: plain JSON, JSON with a Link, ld+json with a small inline context of its own. */
    private HttpRequest.Builder variant(String method, String path, String body, Random rnd) {
        return switch (rnd.nextInt(3)) {
            case 0 -> json(method, path, body);
            case 1 -> json(method, path, body).header("Link", "<" + contexts.url(OK_CONTEXT) + ">; " + LINK_REL);
            default -> ldJson(method, path, body.substring(0, body.length() - 1), inlineContext(1, "w" + nonces.incrementAndGet()));
        };
    }

    /**
     * A read: by id, a q query, a POST query with a distinct small inline context, or the history
     * the writes keep growing (the latest instances of one entity, an hourly aggregation of all).
     */
    private void read(KeepAliveHttp c, Random rnd) throws Exception {
        String id = writerEntity(rnd.nextInt(rates.writers()), rnd.nextInt(rates.entitiesPerWriter()));
        switch (rnd.nextInt(6)) {
            case 4 -> send(c, "temporal-lastN", request("/temporal/entities/" + id + "?lastN=5&timeproperty=modifiedAt").GET(),
                    Set.of(200, 404));
            case 5 -> send(c, "temporal-aggregation", request("/temporal/entities?type=" + TYPE + "&attrs=n&limit=20"
                    + "&options=aggregatedValues&aggrMethods=avg,max,totalCount&aggrPeriodDuration=PT1H&timeproperty=modifiedAt").GET(),
                    Set.of(200));
            case 0 -> send(c, "get", request("/entities/" + id).GET(), Set.of(200, 404));
            case 1 -> send(c, "get-linked", request("/entities/" + id).GET()
                    .header("Link", "<" + contexts.url(OK_CONTEXT) + ">; " + LINK_REL), Set.of(200, 404));
            case 2 -> send(c, "query-q", request("/entities?type=" + TYPE + "&limit=50&q=" + encode("n>" + rnd.nextInt(1_000_000)
                    + ";n<" + (500_000 + rnd.nextInt(500_000)))).GET(), Set.of(200));
            default -> send(c, "post-query", ldJson("POST", "/entityOperations/query", "{\"type\": \"Query\", \"entities\": [{\"type\": \""
                    + TYPE + "\"}], \"q\": \"n>" + rnd.nextInt(1_000_000) + "\"", inlineContext(3, "r" + nonces.incrementAndGet())),
                    Set.of(200));
        }
    }

    /** {@code POST /entityOperations/query} with a distinct large inline context (what a hostile client sends). */
    private void largeInlineQuery(KeepAliveHttp c, Random rnd) throws Exception {
        send(c, "large-context-query", ldJson("POST", "/entityOperations/query", "{\"type\": \"Query\", \"entities\": [{\"type\": \""
                + TYPE + "\"}]", inlineContext(rates.largeQueryTerms(), "q" + nonces.incrementAndGet())), Set.of(200));
    }

    /** An append (or the create) of one of its own entities, as ld+json with a distinct large inline context. */
    private void largeInlineWrite(KeepAliveHttp c, Random rnd, List<String> ids) throws Exception {
        String id = ids.get(rnd.nextInt(ids.size()));
        int n = rnd.nextInt(1_000_000);
        String ctx = inlineContext(rates.largeWriteTerms(), "lw" + nonces.incrementAndGet());
        Integer was = known.get(id);
        boolean create = was.equals(ABSENT) || was.equals(UNKNOWN);
        // an upsert where it was absent or unknown: created (201) or replaced (204), known again either way
        HttpRequest.Builder b = create
                ? ldJson("POST", "/entityOperations/upsert", "[{\"id\": \"" + id + "\", \"type\": \"" + TYPE + "\", "
                        + property("n", n) + ", \"@context\": " + ctx + "}]", null)
                : ldJson("POST", "/entities/" + id + "/attrs", "{" + property("n", n), ctx);
        Set<Integer> expected = create ? Set.of(201, 204) : Set.of(204);
        int status = send(c, create ? "large-context-upsert" : "large-context-append", b, expected);
        known.put(id, expected.contains(status) ? n : UNKNOWN);
    }

    /** A read whose Link names a context that is slow, hung, refused, too large, an error or garbage. */
    private void hostileLink(KeepAliveHttp c, Random rnd) throws Exception {
        long nonce = nonces.incrementAndGet();
        String url = switch (rnd.nextInt(7)) {
            case 0 -> contexts.url("/slow/" + nonce + ".jsonld");
            case 1 -> contexts.url("/hang/" + nonce + ".jsonld");
            case 2 -> "http://127.0.0.1:" + refusingPort + "/refused/" + nonce + ".jsonld";
            case 3 -> contexts.url("/huge/" + nonce + ".jsonld");
            case 4 -> contexts.url("/error/" + nonce + ".jsonld");
            case 5 -> contexts.url("/garbage/" + nonce + ".jsonld");
            default -> contexts.url("/notjson/" + nonce + ".jsonld");
        };
        // 200: the slow one came in time; 504 LdContextNotAvailable; 400 InvalidRequest (not a context)
        send(c, "hostile-link-read", request("/entities?type=" + TYPE + "&limit=5").GET().header("Link", "<" + url + ">; " + LINK_REL),
                Set.of(200, 400, 504));
    }

    /** A {@code ~=} pattern that backtracks without bound, against the long value of {@link #BLOB_ID}. */
    private void regex(KeepAliveHttp c, Random rnd) throws Exception {
        // a connection of its own each time: the server deals connections to its loops in turn, so
        // the match runs on each loop in turn, the health probe's too
        try (KeepAliveHttp once = newClient()) {
            // 403 TooComplexQuery: the budget ran out; 200: it finished in its budget (no match)
            send(once, "regex-query", request("/entities?type=" + BLOB_TYPE + "&q=" + encode("blob~=\"((a+)+)+b\"")).GET(),
                    Set.of(200, 403));
        }
    }

    // ---------------------------------------------------------------- requests and counts

    private static String property(String name, int value) {
        return "\"" + name + "\": {\"type\": \"Property\", \"value\": " + value + "}";
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(base.resolve(base.getPath() + path)).timeout(REQUEST_TIMEOUT);
    }

    private HttpRequest.Builder json(String method, String path, String body) {
        return request(path).method(method, HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
    }

    /**
     * An ld+json request: {@code openBody} is a JSON object without its closing brace, to which the
     * {@code @context} member is added last; with {@code context} null, the body is sent as it is.
     */
    private HttpRequest.Builder ldJson(String method, String path, String openBody, String context) {
        String body = context == null ? openBody : openBody + ", \"@context\": " + context + "}";
        return request(path).method(method, HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/ld+json");
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** Sends; counts the answer as done (expected) or an error of its kind; returns its status, -1 when there was none. */
    private int send(KeepAliveHttp c, String op, HttpRequest.Builder b, Set<Integer> expected) {
        HttpResponse<String> r;
        try {
            r = c.sendString(b.build());
        } catch (IOException e) {
            error(op + " " + e.getClass().getSimpleName());
            return -1;
        }
        if (expected.contains(r.statusCode())) {
            done.increment();
            if (r.statusCode() >= 400) {
                refused.increment();
            }
        } else {
            error(op + " " + r.statusCode());
        }
        return r.statusCode();
    }

    private void error(String kind) {
        errors.computeIfAbsent(kind, k -> new LongAdder()).increment();
    }

    /** Requests answered as expected (refusals of hostile requests included). */
    long done() {
        return done.sum();
    }

    /** Of {@link #done}: the hostile requests refused as they must be (4xx, 504). */
    long refused() {
        return refused.sum();
    }

    /** Everything else, by kind ({@code operation status} or {@code operation exception}). */
    Map<String, Long> errors() {
        Map<String, Long> m = new TreeMap<>();
        errors.forEach((k, v) -> m.put(k, v.sum()));
        return m;
    }

    /**
     * Reads back every entity whose last write was acknowledged and hands each one that does not show
     * it (an {@code n} other than the last one written, present when deleted, absent when written) to
     * {@code mismatch}. Returns how many were checked.
     */
    int checkLastWritten(Consumer<String> mismatch) throws Exception {
        try (KeepAliveHttp c = newClient()) {
            return checkLastWritten(c, mismatch);
        }
    }

    private int checkLastWritten(KeepAliveHttp c, Consumer<String> mismatch) throws Exception {
        int checked = 0;
        for (Map.Entry<String, Integer> e : new TreeMap<>(known).entrySet()) {
            Integer want = e.getValue();
            if (want.equals(UNKNOWN)) {
                continue;
            }
            checked++;
            HttpResponse<String> r = c.sendString(request("/entities/" + e.getKey() + "?options=keyValues").GET().build());
            if (want.equals(ABSENT)) {
                if (r.statusCode() != 404) {
                    mismatch.accept(e.getKey() + ": deleted (or never created), but GET answered " + r.statusCode() + " " + r.body());
                }
            } else if (r.statusCode() != 200) {
                mismatch.accept(e.getKey() + ": n=" + want + " written last, but GET answered " + r.statusCode() + " " + r.body());
            } else {
                JsonNode got = JSON.readTree(r.body());
                if (got.path("n").asInt(Integer.MIN_VALUE) != want) {
                    mismatch.accept(e.getKey() + ": n=" + want + " written last, but GET shows " + r.body());
                }
            }
        }
        return checked;
    }
}
