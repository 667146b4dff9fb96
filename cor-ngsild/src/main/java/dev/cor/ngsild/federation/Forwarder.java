package dev.cor.ngsild.federation;

import java.io.IOException;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.rest.CorRestJson;
import dev.cor.rest.client.CorRestCall;
import dev.cor.rest.client.CorRestClient;
import dev.cor.rest.client.CorRestClientException;
import dev.cor.rest.client.CorRestClientRequest;
import dev.cor.rest.client.CorRestClientResponse;

/**
 * Sends a distributed operation's forwards (ETSI GS CIM 009 § 4.3.6) - every one started before
 * any is awaited, so that a fan-out to N sources takes the slowest source's time, not the sum -
 * and sorts each answer into data, "nothing here" (404) or a failure with the NGSILD-Warning it
 * is reported with (§ 6.3.17: 199 no answer in time or in cooldown, 299 an error answer, 111 an
 * answer that is not what was asked). It keeps each registration's cooldown (§ 5.2.34): after a
 * failure the source is not asked again until it has passed. Names this broker in {@code Via}
 * headers (§ 4.3.6.4) so that a loop of brokers ends. One per broker; thread-safe (the cooldowns
 * are a concurrent map; the rest is immutable).
 */
public final class Forwarder {
    private static final System.Logger LOG = System.getLogger(Forwarder.class.getName());

    /** Per registration (tenant and id): until when it is in cooldown (epoch ms). */
    private final Map<String, Long> cooldownUntil = new ConcurrentHashMap<>();
    private final CorRestClient client;
    private final String brokerId;
    private final long defaultTimeoutMs;
    private final InstantSource clock;
    private volatile FailureListener listener = FailureListener.NONE;

    /** Told of each forward's outcome: the registry keeps it in the registration's status members. */
    public interface FailureListener {
        FailureListener NONE = new FailureListener() {
            @Override
            public void success(Registration r, long nowMs) {
            }

            @Override
            public void failure(Registration r, long nowMs, String reason) {
            }
        };

        void success(Registration r, long nowMs);

        void failure(Registration r, long nowMs, String reason);
    }

    /**
     * @param client           the client forwards go through (its own: a hanging source holds its connections, nobody else's)
     * @param brokerId         this broker's name in {@code Via} headers
     * @param defaultTimeoutMs the deadline of a forward whose registration names none
     */
    public Forwarder(CorRestClient client, String brokerId, long defaultTimeoutMs, InstantSource clock) {
        this.client = Objects.requireNonNull(client, "client");
        this.brokerId = Objects.requireNonNull(brokerId, "brokerId");
        this.defaultTimeoutMs = defaultTimeoutMs;
        this.clock = clock;
        if (!brokerId.chars().allMatch(c -> c > 0x20 && c < 0x7F && c != ',' && c != '"')) {
            throw new IllegalArgumentException("a broker id is visible ASCII without spaces, commas or quotes: " + brokerId);
        }
    }

    /** Who is told of each forward's outcome (the registry, once it keeps a status). */
    public void listener(FailureListener l) {
        this.listener = Objects.requireNonNull(l, "listener");
    }

    public String brokerId() {
        return brokerId;
    }

    /**
     * Whether an incoming {@code Via} header (RFC 9110 § 7.6.3: comma-separated
     * {@code protocol received-by} entries) names this broker: the request went round a loop.
     */
    public boolean seenIn(List<String> via) {
        for (String v : via) {
            int at = 0;
            while (at <= v.length()) {
                int comma = v.indexOf(',', at);
                int end = comma < 0 ? v.length() : comma;
                if (receivedBy(v, at, end)) {
                    return true;
                }
                at = end + 1;
            }
        }
        return false;
    }

    /** Whether the Via entry {@code v[from, to)} - {@code protocol received-by [comment]} - was received by this broker. */
    private boolean receivedBy(String v, int from, int to) {
        int i = skip(v, from, to, true);
        i = skip(v, i, to, false); // the protocol
        i = skip(v, i, to, true);
        int end = skip(v, i, to, false);
        return end - i == brokerId.length() && v.startsWith(brokerId, i);
    }

    /** The first index from {@code i} below {@code to} that is not (or, {@code !space}, that is) whitespace. */
    private static int skip(String v, int i, int to, boolean space) {
        while (i < to && Character.isWhitespace(v.charAt(i)) == space) {
            i++;
        }
        return i;
    }

    /** The {@code Via} of a forward: the incoming entries, then this broker (§ 4.3.6.4, as Orion-LD writes it). */
    public String via(List<String> incoming) {
        StringBuilder b = new StringBuilder();
        for (String v : incoming) {
            if (!v.isBlank()) {
                b.append(v.trim()).append(", ");
            }
        }
        return b.append("1.1 ").append(brokerId).toString();
    }

    /** The deadline of a forward to {@code r}: its {@code management.timeout}, or the broker's. */
    public long timeoutMs(Registration r) {
        return r.timeoutMs() > 0 ? r.timeoutMs() : defaultTimeoutMs;
    }

    /**
     * One forward: where it goes and what it asks. A {@code raw} one's answer keeps its body as
     * the bytes that came ({@link Answer#bytes}), unparsed: for a caller that may pass them on as
     * they are, and otherwise asks for them parsed ({@link #parsed}).
     */
    public record Outgoing(Registration registration, CorRestClientRequest request, boolean raw) {
        public Outgoing(Registration registration, CorRestClientRequest request) {
            this(registration, request, false);
        }
    }

    /**
     * One forward's outcome: {@code status} and the parsed {@code body} when the source answered
     * (a 2xx, or a 404: nothing there), or {@code warning} - the NGSILD-Warning value that reports
     * why it gave nothing usable. The answer of a raw forward has its 2xx body in {@code bytes}
     * instead, not yet parsed nor checked.
     */
    public record Answer(Registration registration, int status, JsonNode body, String warning, byte[] bytes) {
        public Answer(Registration registration, int status, JsonNode body, String warning) {
            this(registration, status, body, warning, null);
        }

        public boolean ok() {
            return warning == null && status >= 200 && status < 300;
        }
    }

    /**
     * Sends every forward - all started, then all awaited - and gives their answers in the same
     * order. A source in cooldown is not asked: its answer is the timeout warning § 5.2.34 asks
     * for. Inside a coroutine the forwards run as child coroutines of its loop; elsewhere (a
     * worker) one after the other, each bounded by its deadline.
     */
    public List<Answer> send(List<Outgoing> outs) {
        long now = clock.millis();
        List<CorRestCall> calls = new ArrayList<>(outs.size());
        List<Answer> answers = new ArrayList<>(outs.size());
        for (Outgoing o : outs) {
            Long until = cooldownUntil.isEmpty() ? null : cooldownUntil.get(key(o.registration()));
            if (until != null && until > now) {
                calls.add(null);
                answers.add(new Answer(o.registration(), 0, null, warning(199, o.registration(),
                        "in cooldown after a failure, not asked until " + java.time.Instant.ofEpochMilli(until))));
            } else {
                calls.add(client.start(o.request()));
                answers.add(null);
            }
        }
        List<CorRestCall> started = new ArrayList<>(calls.size());
        for (CorRestCall c : calls) {
            if (c != null) {
                started.add(c);
            }
        }
        CorRestClient.awaitAll(started);
        long done = clock.millis();
        for (int i = 0; i < outs.size(); i++) {
            CorRestCall c = calls.get(i);
            if (c == null) {
                continue;
            }
            Registration r = outs.get(i).registration();
            Answer a = answer(r, c, outs.get(i).raw());
            answers.set(i, a);
            if (a.warning() != null) {
                if (r.cooldownMs() > 0) {
                    cooldownUntil.put(key(r), done + r.cooldownMs());
                }
                LOG.log(System.Logger.Level.DEBUG, () -> "cor-ngsild: forward to " + r.endpoint() + " (registration "
                        + r.id() + ") failed: " + a.warning());
                listener.failure(r, done, a.warning());
            } else {
                if (!cooldownUntil.isEmpty()) {
                    cooldownUntil.remove(key(r));
                }
                listener.success(r, done);
            }
        }
        return answers;
    }

    /**
     * A forward's outcome. The warnings say what kind of failure it was, never what the source or
     * the connection said (a status line, an exception's text): a source's bytes and errors never
     * reach a client, nor tell it how an address it registered answers. The precise reason is
     * the operator's, in the log.
     */
    private Answer answer(Registration r, CorRestCall call, boolean raw) {
        Throwable error = call.error();
        if (error != null) {
            LOG.log(System.Logger.Level.DEBUG, () -> "cor-ngsild: forward to " + r.endpoint() + " (registration " + r.id()
                    + "): " + error);
        }
        if (error instanceof CorRestClientException e && (e.kind() == CorRestClientException.Kind.TOO_LARGE
                || e.kind() == CorRestClientException.Kind.MALFORMED)) {
            // an answer came, but not one to use: too large, or not HTTP (§ 6.3.17: 111)
            return new Answer(r, 0, null, warning(111, r, "answered what cannot be used"));
        }
        if (error instanceof CorRestClientException e && (e.kind() == CorRestClientException.Kind.DENIED || e.tlsFailure() != null)) {
            // the policy's one text, or which TLS check failed: the client's words, never the source's
            return new Answer(r, 0, null, warning(199, r, e.reason("its endpoint", timeoutMs(r))));
        }
        if (error != null) {
            return new Answer(r, 0, null, warning(199, r, "no answer"));
        }
        CorRestClientResponse resp = call.response();
        int status = resp.status();
        if (status == 404) {
            return new Answer(r, 404, null, null); // § 6.3.17: nothing there is not abnormal
        }
        if (status >= 400 || status < 200) {
            return new Answer(r, status, null, warning(299, r, "answered " + status));
        }
        if (status == 204 || resp.body().length == 0) {
            return new Answer(r, status, null, null);
        }
        if (raw) {
            return new Answer(r, status, null, null, resp.body());
        }
        return parse(r, status, resp.body(), false);
    }

    /**
     * A raw forward's answer with its body parsed, as a forward that was not raw would have had
     * it - or, when the body is not JSON, the 111 warning ({@link #invalid}).
     */
    public Answer parsed(Answer a) {
        return a.bytes() == null ? a : parse(a.registration(), a.status(), a.bytes(), true);
    }

    /** {@code bytes} as an answer's JSON body, else the 111 warning - {@code late}: after the source's success was counted. */
    private Answer parse(Registration r, int status, byte[] bytes, boolean late) {
        String why;
        try {
            JsonNode body = CorRestJson.mapper().readTree(bytes);
            if (body != null && !body.isMissingNode()) {
                return new Answer(r, status, body, null);
            }
            why = "answered " + status + " with no JSON";
        } catch (IOException e) {
            why = "answered " + status + " with a body that is not JSON";
        }
        return late ? invalid(new Answer(r, status, null, null), why) : new Answer(r, status, null, warning(111, r, why));
    }

    /** An answer that arrived but holds what no NGSI-LD source sends: reported as § 6.3.17's 111. */
    public Answer invalid(Answer a, String why) {
        Registration r = a.registration();
        Answer bad = new Answer(r, a.status(), null, warning(111, r, why));
        long now = clock.millis();
        if (r.cooldownMs() > 0) {
            cooldownUntil.put(key(r), now + r.cooldownMs());
        }
        return bad; // the registry was told of a success already: the count of forwards stays one
    }

    /**
     * An NGSILD-Warning value (§ 6.3.17, in RFC 7234's warning form): {@code code agent "text"},
     * the agent this broker, the text naming the registration and its endpoint.
     */
    public String warning(int code, Registration r, String why) {
        String text = "registration " + r.id() + " (" + r.endpoint() + "): " + why;
        return code + " " + brokerId + " \"" + text.replace('"', '\'').replace('\\', '/') + "\"";
    }

    private static String key(Registration r) {
        return r.tenant() + " " + r.id();
    }
}
