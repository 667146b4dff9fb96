package dev.cor.rest;

import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;

/**
 * One REST request and its response, whatever carried it (HTTP/1.1 or {@code cor://}).
 * <p>
 * The request: method, path, query, headers, the body as bytes and - where it is JSON - its
 * Jackson tree, parsed once on first use (or handed over already parsed, as {@code cor://}
 * does). The response: status, headers, body. Its {@link CorRestState} holds what must follow
 * the request rather than the thread. Work to do after the answer went out is added with
 * {@link #defer(CorRestDeferred)}.
 * <p>
 * A request is touched by one thread at a time: its loop, the coroutine that runs it, or the
 * worker it hopped to. {@link #current()} is always the running request: inside a coroutine it
 * follows the coroutine across its yields; inline on a loop or on a worker it is the thread's.
 */
public final class CorRest {
    /** The request running inline on a loop or on a worker: set only while it runs, never across a yield. */
    private static final ThreadLocal<CorRest> ON_THREAD = new ThreadLocal<>();

    private final String method;
    private final String path;
    private final String query;
    private final CorRestHeaders headers;
    private final byte[] body;
    private JsonNode json;
    private boolean jsonParsed;
    private final CorRestState state = new CorRestState();

    private int status = 200;
    private final CorRestHeaders responseHeaders = new CorRestHeaders();
    private byte[] responseBody = EMPTY;
    /** What the handler tells the access log of the request (not sent), or {@code null}. */
    private String note;
    private List<CorRestDeferred> deferred;
    /** Set by the dispatcher while the request is in flight: where its answer goes. */
    CorRestResponder responder;
    /** The coroutine running it, and its task there, while it runs as one (its loop's thread only). */
    private CorCo coroutine;
    private long coroutineTask;
    private boolean cancelled;
    /** JFR: begun when its coroutine started, while a recording wants it (dispatcher only). */
    LongCoroutineEvent longCoroutine;

    private static final byte[] EMPTY = new byte[0];

    private CorRest(Builder b) {
        this.method = b.method;
        this.path = b.path;
        this.query = b.query;
        this.headers = b.headers != null ? b.headers : new CorRestHeaders();
        this.body = b.body != null ? b.body : EMPTY;
        if (b.json != null) {
            this.json = b.json;
            this.jsonParsed = true;
        }
    }

    public static Builder builder(String method, String path) {
        return new Builder(method, path);
    }

    // ---------------------------------------------------------------- the running request

    /** The running request: the current coroutine's, else the thread's (inline or on a worker); or {@code null}. */
    public static CorRest current() {
        CorCo co = CorCo.current();
        if (co != null && co.context() instanceof CorRest r) {
            return r;
        }
        return ON_THREAD.get();
    }

    /** Runs {@code body} with {@code request} as the thread's current request (inline or on a worker, where nothing yields). */
    static void runOnThread(CorRest request, ThrowingRunnable body) throws Exception {
        CorRest outer = ON_THREAD.get();
        ON_THREAD.set(request);
        try {
            body.run();
        } finally {
            if (outer == null) {
                ON_THREAD.remove();
            } else {
                ON_THREAD.set(outer);
            }
        }
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }

    // ---------------------------------------------------------------- the one wait

    /**
     * What is left of {@code deadlineNanos} (a {@link System#nanoTime()} instant), in whole
     * milliseconds rounded up - a wait never ends before its deadline -; 0 once it has passed. The
     * {@code timeoutMs} of a {@link #waitFd} against a deadline.
     */
    public static long remainingMs(long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        return left <= 0 ? 0 : (left + 999_999) / 1_000_000;
    }

    /**
     * The one wait of every client: like {@code poll()} on one channel. Inside a coroutine it is
     * its loop's wait ({@link CorCo#waitFd}) - the coroutine yields and the loop serves everyone
     * else. Outside one (a worker, a plain thread) it blocks this thread on the channel. On a loop
     * thread outside a coroutine it refuses: a loop never blocks.
     *
     * @param channel   a channel in non-blocking mode
     * @param ops       {@link java.nio.channels.SelectionKey} interest bits
     * @param timeoutMs the deadline in milliseconds (negative: none)
     * @return the ready operations, or 0 when the timeout passed first
     * @throws IllegalStateException on a loop thread outside a coroutine
     */
    public static int waitFd(SelectableChannel channel, int ops, long timeoutMs) throws IOException {
        if (CorCo.current() != null) {
            return CorCo.waitFd(channel, ops, timeoutMs);
        }
        CorCoLoop loop = CorCoLoop.current();
        if (loop != null) {
            throw new IllegalStateException("a blocking wait on loop thread " + loop.name()
                    + " outside a coroutine: a loop never blocks (run the request as a coroutine or on a worker)");
        }
        return ThreadWait.await(channel, ops, timeoutMs);
    }

    // ---------------------------------------------------------------- cancelling

    void runsAs(CorCo co) {
        coroutine = co;
        coroutineTask = co == null ? 0 : co.taskId();
    }

    /**
     * The caller gave up (a {@code cor://} CANCEL, spec § 5.5): a request running as a coroutine
     * is cancelled at its next wait (the wait throws {@link dev.cor.base.CorCoCancelledException},
     * the request unwinds and is answered 499, an answer nobody receives). One running inline or
     * on a worker runs to its end; it may look at {@link #isCancelled()}. Its loop's thread only.
     */
    public void cancel(String why) {
        cancelled = true;
        CorCo co = coroutine;
        if (co != null) {
            co.cancel(coroutineTask, why);
        }
    }

    /** Whether the caller gave up on this request ({@link #cancel}). */
    public boolean isCancelled() {
        return cancelled;
    }

    // ---------------------------------------------------------------- the request

    public String method() {
        return method;
    }

    public String path() {
        return path;
    }

    /** The raw query string (without {@code ?}), or {@code null}. */
    public String query() {
        return query;
    }

    /** The first value of a query parameter (percent-decoded), or {@code null}. */
    public String queryParam(String name) {
        return CorRestQuery.param(query, name);
    }

    public CorRestHeaders headers() {
        return headers;
    }

    public byte[] body() {
        return body;
    }

    /** Whether the request body is JSON by its Content-Type (or arrived parsed). */
    public boolean isJson() {
        return (jsonParsed && json != null) || CorRestJson.isJsonType(headers.get("Content-Type"));
    }

    /**
     * The body as a JSON tree, parsed once, or {@code null} when the body is empty or not JSON.
     *
     * @throws CorRestException 400 when the body says it is JSON and is not
     */
    public JsonNode json() {
        if (!jsonParsed) {
            jsonParsed = true;
            if (body.length > 0 && CorRestJson.isJsonType(headers.get("Content-Type"))) {
                try {
                    json = CorRestJson.mapper().readTree(body);
                } catch (IOException e) {
                    throw new CorRestException(400, "Bad Request", "the body is not valid JSON: " + firstLine(e));
                }
            }
        }
        return json;
    }

    public CorRestState state() {
        return state;
    }

    // ---------------------------------------------------------------- the response

    public int status() {
        return status;
    }

    public CorRestHeaders responseHeaders() {
        return responseHeaders;
    }

    public byte[] responseBody() {
        return responseBody;
    }

    /**
     * Tells the access log something of how the request was served - a word or two without
     * spaces, say {@code scan:20000} for a query that read 20 000 entities it did not answer
     * with. Not sent to the client; the last one set is logged.
     */
    public void note(String note) {
        this.note = note;
    }

    /** What the handler told the access log ({@link #note(String)}), or {@code null}. */
    public String note() {
        return note;
    }

    /**
     * Sets the response: status, Content-Type (may be {@code null} for no body) and body.
     *
     * @throws IllegalArgumentException for a status outside 100..599, which no carrier can send
     */
    public CorRest respond(int status, String contentType, byte[] body) {
        this.status = checkStatus(status);
        this.responseBody = body != null ? body : EMPTY;
        if (contentType != null) {
            responseHeaders.set("Content-Type", contentType);
        } else {
            responseHeaders.remove("Content-Type");
        }
        return this;
    }

    /** Sets a JSON response; a status outside 100..599 is refused as by {@link #respond}. */
    public CorRest respondJson(int status, JsonNode body) {
        checkStatus(status);
        try {
            return respond(status, "application/json", CorRestJson.mapper().writeValueAsBytes(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a JSON tree that does not serialize", e);
        }
    }

    /** Sets a problem-details response (RFC 9457): {@code type}, {@code title}, {@code status}, {@code detail}. */
    public CorRest fail(CorRestException e) {
        ObjectNode p = CorRestJson.mapper().createObjectNode();
        p.put("type", e.type());
        p.put("title", e.title());
        p.put("status", e.status());
        if (e.detail() != null) {
            p.put("detail", e.detail());
        }
        try {
            return respond(e.status(), "application/problem+json", CorRestJson.mapper().writeValueAsBytes(p));
        } catch (JsonProcessingException x) {
            throw new IllegalStateException(x);
        }
    }

    /** {@code status} if HTTP can carry it (RFC 9110 § 15: three digits, 1xx to 5xx). */
    static int checkStatus(int status) {
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("status " + status + " is outside 100..599");
        }
        return status;
    }

    // ---------------------------------------------------------------- after the answer

    /** Adds work to run after the answer went out (the post-response phase), in the order added. */
    public void defer(CorRestDeferred work) {
        if (deferred == null) {
            deferred = new ArrayList<>(2);
        }
        deferred.add(Objects.requireNonNull(work, "work"));
    }

    public boolean hasDeferred() {
        return deferred != null && !deferred.isEmpty();
    }

    /** Runs and forgets the deferred work; a failure is logged and the rest still runs. */
    void runDeferred() {
        List<CorRestDeferred> work = deferred;
        deferred = null;
        if (work == null) {
            return;
        }
        for (CorRestDeferred w : work) {
            try {
                w.run(this);
            } catch (Throwable t) {
                System.getLogger(CorRest.class.getName()).log(System.Logger.Level.WARNING,
                        "cor: post-response work of " + method + " " + path + " failed", t);
            }
        }
    }

    @Override
    public String toString() {
        return method + " " + path + (query != null ? "?" + query : "");
    }

    private static String firstLine(IOException e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl >= 0 ? m.substring(0, nl) : m;
    }

    /** Builds a request: what a server read, or what an application hands to a client. */
    public static final class Builder {
        private final String method;
        private final String path;
        private String query;
        private CorRestHeaders headers;
        private byte[] body;
        private JsonNode json;

        private Builder(String method, String path) {
            this.method = Objects.requireNonNull(method, "method");
            this.path = Objects.requireNonNull(path, "path");
        }

        public Builder query(String query) {
            this.query = query;
            return this;
        }

        public Builder headers(CorRestHeaders headers) {
            this.headers = headers;
            return this;
        }

        public Builder header(String name, String value) {
            if (headers == null) {
                headers = new CorRestHeaders();
            }
            headers.add(name, value);
            return this;
        }

        public Builder body(byte[] body) {
            this.body = body;
            return this;
        }

        public Builder body(String utf8) {
            this.body = utf8.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /** A body that arrived already parsed ({@code cor://}): no text to parse again. */
        public Builder json(JsonNode json) {
            this.json = json;
            return this;
        }

        public CorRest build() {
            return new CorRest(this);
        }
    }
}
