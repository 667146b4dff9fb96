package dev.cor.bench.load;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import dev.cor.bench.cli.Endpoint;
import dev.cor.bench.cli.Flags;
import dev.cor.bench.cli.Flags.FlagException;

/**
 * One run of the load generator, as its command line asked, every value checked and bounded.
 * {@code rate} is NaN for a closed loop. Made by {@link #parse} (the CLI) or {@link #builder(String)}
 * (tests and other tools); immutable.
 */
public record LoadOptions(Endpoint url, int connections, int sockets, int durationS, int warmupS, double rate,
        String method, List<Header> headers, byte[] body, long timeoutMs, Path json, boolean allowRemote, long requests) {

    static final int MAX_CONNECTIONS = 10_000;
    static final int MAX_SECONDS = 3_600;
    static final double MAX_RATE = 1_000_000;
    static final long MAX_TIMEOUT_MS = 600_000;
    static final long DEFAULT_TIMEOUT_MS = 5_000;
    static final int MAX_HEADERS = 64;
    static final int MAX_HEADER_VALUE = 8 * 1024;
    static final long MAX_BODY_BYTES = 16L * 1024 * 1024;

    public static final String USAGE = """
            usage: corRequest --url URL [--connections N] [--sockets K] [--duration S] [--warmup S] [--rate R]
                              [--method M] [--header 'Name: value']... [--body-file F] [--timeout-ms MS]
                              [--requests N] [--json FILE] [--allow-remote]
              --url URL          http://host:port/path or cor://host:port/path; over http:// a {socket} in it
                                 becomes the number of the TCP connection (0 to K-1) that sends it: each
                                 connection on an entity of its own (a PATCH that no other one contends with)
              --connections N    callers, each with one request at a time (default 1, at most 10000)
              --sockets K        TCP connections the callers share, caller c on socket c % K (default N);
                                 over HTTP/1.1 callers that share a socket take turns on it
              --duration S       seconds measured (default 10)
              --warmup S         seconds run first and not counted (default 3)
              --rate R           requests per second in total, an OPEN loop: each request is due at a fixed
                                 time and its latency counts from then, however late it could be sent;
                                 without it a CLOSED loop: each caller sends again when its answer is in
              --method M         request method (default GET)
              --header H         a request header 'Name: value'; repeatable
              --body-file F      the request body (at most 16 MiB); over http:// a {seq} in it becomes a new
                                 12-digit number in each request (to create a new entity each time); every
                                 {seq} of one request takes the same number (a batch of ids {seq}-01, {seq}-02)
              --requests N       closed loop only: send N requests in all (warmup included; {seq} numbers them from 1),
                                 then end once they are answered - or at the end of --duration, whichever
                                 comes first (a delete of exactly the entities a create made)
              --timeout-ms MS    time an answer (or a connect) may take before it counts as an error (default 5000)
              --json FILE        also write the result as one JSON object to FILE
              --allow-remote     allow a host that is not a loopback address""";

    /** One request header, checked: a token name and a value without line breaks. */
    public record Header(String name, String value) {
        /** Parses {@code Name: value}. */
        static Header parse(String text) {
            int colon = text.indexOf(':');
            if (colon <= 0) {
                throw new FlagException("--header takes 'Name: value', not '" + text + "'");
            }
            String name = text.substring(0, colon).trim();
            String value = text.substring(colon + 1).trim();
            if (!isToken(name) || name.length() > 256) {
                throw new FlagException("--header: '" + name + "' is not a header name");
            }
            if (value.length() > MAX_HEADER_VALUE) {
                throw new FlagException("--header " + name + ": value over " + MAX_HEADER_VALUE + " characters");
            }
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if ((c < 0x20 && c != '\t') || c == 0x7f || c > 0xff) {
                    throw new FlagException("--header " + name + ": the value holds a control or non-Latin-1 character");
                }
            }
            String lower = name.toLowerCase(Locale.ROOT);
            if (lower.equals("content-length") || lower.equals("transfer-encoding")) {
                throw new FlagException("--header " + name + ": set by the generator from --body-file");
            }
            return new Header(name, value);
        }
    }

    /** Whether this is an open-loop run (a fixed request rate). */
    public boolean openLoop() {
        return !Double.isNaN(rate);
    }

    /** Parses and checks a command line. */
    public static LoadOptions parse(String[] args) {
        Flags f = Flags.parse(args, Set.of("url", "connections", "sockets", "duration", "warmup", "rate", "method",
                "header", "body-file", "timeout-ms", "json", "requests"), Set.of("allow-remote"));
        Builder b = builder(f.required("url"));
        b.connections(f.integer("connections", 1, 1, MAX_CONNECTIONS));
        b.sockets(f.integer("sockets", b.connections, 1, MAX_CONNECTIONS));
        b.duration(f.integer("duration", 10, 1, MAX_SECONDS));
        b.warmup(f.integer("warmup", 3, 0, MAX_SECONDS));
        b.rate(f.decimal("rate", Double.NaN, 0.1, MAX_RATE));
        b.method(f.string("method", "GET"));
        if (f.all("header").size() > MAX_HEADERS) {
            throw new FlagException("at most " + MAX_HEADERS + " --header flags");
        }
        for (String h : f.all("header")) {
            b.headers.add(Header.parse(h));
        }
        String bodyFile = f.string("body-file", null);
        if (bodyFile != null) {
            b.body(readBody(Path.of(bodyFile)));
        }
        b.timeoutMs(f.number("timeout-ms", DEFAULT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS));
        b.requests(f.number("requests", 0, 0, Long.MAX_VALUE));
        String json = f.string("json", null);
        b.json = json == null ? null : Path.of(json);
        b.allowRemote = f.has("allow-remote");
        return b.build();
    }

    private static byte[] readBody(Path file) {
        try {
            long size = Files.size(file);
            if (size > MAX_BODY_BYTES) {
                throw new FlagException("--body-file " + file + ": " + size + " bytes, at most " + MAX_BODY_BYTES);
            }
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new FlagException("--body-file " + file + ": cannot read it (" + e + ")");
        }
    }

    static boolean isToken(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** A builder starting from the defaults of the command line; {@code url} is required. */
    public static Builder builder(String url) {
        return new Builder(url);
    }

    /** Builds {@link LoadOptions} with the command line's defaults and checks; see {@link #USAGE}. */
    public static final class Builder {
        private final Endpoint url;
        private int connections = 1;
        private int sockets = -1;
        private int durationS = 10;
        private int warmupS = 3;
        private double rate = Double.NaN;
        private String method = "GET";
        private final List<Header> headers = new ArrayList<>();
        private byte[] body = new byte[0];
        private long timeoutMs = DEFAULT_TIMEOUT_MS;
        private Path json;
        private boolean allowRemote;
        private long requests;

        private Builder(String url) {
            this.url = Endpoint.parse(url.replace(HttpRequestBytes.SOCKET, HttpRequestBytes.SOCKET_IN_URL), "--url");
            if (!this.url.scheme().equals("http") && !this.url.scheme().equals("cor")) {
                throw new FlagException("--url: http:// or cor:// only, not " + url);
            }
        }

        public Builder connections(int n) {
            this.connections = within("--connections", n, 1, MAX_CONNECTIONS);
            return this;
        }

        /** Sockets the callers share; default: one each. */
        public Builder sockets(int k) {
            this.sockets = within("--sockets", k, 1, MAX_CONNECTIONS);
            return this;
        }

        public Builder duration(int seconds) {
            this.durationS = within("--duration", seconds, 1, MAX_SECONDS);
            return this;
        }

        public Builder warmup(int seconds) {
            this.warmupS = within("--warmup", seconds, 0, MAX_SECONDS);
            return this;
        }

        /** Requests per second in total (an open loop); NaN for a closed loop. */
        public Builder rate(double perSecond) {
            if (!Double.isNaN(perSecond) && !(perSecond >= 0.1 && perSecond <= MAX_RATE)) {
                throw new FlagException("--rate takes a number from 0.1 to " + (long) MAX_RATE + ", not " + perSecond);
            }
            this.rate = perSecond;
            return this;
        }

        public Builder method(String m) {
            if (!isToken(m) || m.length() > 32) {
                throw new FlagException("--method: '" + m + "' is not a method name");
            }
            this.method = m;
            return this;
        }

        public Builder header(String nameColonValue) {
            if (headers.size() == MAX_HEADERS) {
                throw new FlagException("at most " + MAX_HEADERS + " --header flags");
            }
            headers.add(Header.parse(nameColonValue));
            return this;
        }

        public Builder body(byte[] bytes) {
            if (bytes.length > MAX_BODY_BYTES) {
                throw new FlagException("body over " + MAX_BODY_BYTES + " bytes");
            }
            this.body = bytes.clone();
            return this;
        }

        public Builder timeoutMs(long ms) {
            if (ms < 1 || ms > MAX_TIMEOUT_MS) {
                throw new FlagException("--timeout-ms takes a whole number from 1 to " + MAX_TIMEOUT_MS + ", not " + ms);
            }
            this.timeoutMs = ms;
            return this;
        }

        /** Closed loop: requests to send in all, warmup included (0: as many as the time allows). */
        public Builder requests(long n) {
            if (n < 0) {
                throw new FlagException("--requests takes a whole number, 0 or more, not " + n);
            }
            this.requests = n;
            return this;
        }

        public Builder json(Path file) {
            this.json = file;
            return this;
        }

        public LoadOptions build() {
            int k = sockets < 0 ? connections : sockets;
            if (k > connections) {
                throw new FlagException("--sockets (" + k + ") cannot exceed --connections (" + connections
                        + "): a socket nobody uses measures nothing");
            }
            if (requests > 0 && !Double.isNaN(rate)) {
                throw new FlagException("--requests goes with a closed loop, not with --rate");
            }
            return new LoadOptions(url, connections, k, durationS, warmupS, rate, method, List.copyOf(headers),
                    body.clone(), timeoutMs, json, allowRemote, requests);
        }

        private static int within(String flag, int v, int min, int max) {
            if (v < min || v > max) {
                throw new FlagException(flag + " takes a whole number from " + min + " to " + max + ", not " + v);
            }
            return v;
        }
    }
}
