package dev.cor.http;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestException;

/**
 * The server tests' application: {@code /hello} inline, {@code /slow?ms=N} may wait (sleeps on
 * the loop as a coroutine, on the worker otherwise), {@code /nowait} may wait and never does,
 * {@code /echo} answers the body and its type, {@code /big?bytes=N} a large body,
 * {@code /id?n=X} answers X, {@code /defer} adds post-response work, {@code /gated-big?bytes=N}
 * may wait: it waits until {@link #gate} opens, then answers like {@code /big}.
 */
final class TestApp implements CorRestApplication {
    final ConcurrentLinkedQueue<String> deferredRan = new ConcurrentLinkedQueue<>();
    final CompletableFuture<Void> gate = new CompletableFuture<>();

    @Override
    public boolean canWait(CorRest r) {
        return r.path().equals("/slow") || r.path().equals("/nowait") || r.path().equals("/defer")
                || r.path().equals("/big-co") || r.path().equals("/gated-big");
    }

    @Override
    public void handle(CorRest r) throws Exception {
        switch (r.path()) {
            case "/hello" -> text(r, "{\"hello\":\"world\"}", "application/json");
            case "/slow" -> {
                long ms = Long.parseLong(r.queryParam("ms"));
                if (CorCo.current() != null) {
                    CorCo.sleep(ms);
                } else {
                    Thread.sleep(ms);
                }
                text(r, "slept " + ms, "text/plain");
            }
            case "/nowait", "/id" -> text(r, String.valueOf(r.queryParam("n")), "text/plain");
            case "/echo" -> r.respond(200, r.headers().get("Content-Type"), r.body());
            case "/big", "/big-co", "/gated-big" -> {
                if (r.path().equals("/gated-big")) {
                    awaitGate();
                }
                int n = Integer.parseInt(r.queryParam("bytes"));
                byte[] b = new byte[n];
                for (int i = 0; i < n; i++) {
                    b[i] = (byte) ('a' + i % 26);
                }
                r.respond(200, "application/octet-stream", b);
            }
            case "/defer" -> {
                String tag = r.queryParam("tag");
                r.defer(x -> deferredRan.add(tag + (CorCo.current() != null ? " coroutine" : " thread")));
                text(r, "deferred " + tag, "text/plain");
            }
            default -> throw new CorRestException(404, "Not Found", "no route " + r.path());
        }
    }

    /** Waits (at most 30 s) for the gate: yielding as a coroutine, blocking on a worker. */
    private void awaitGate() throws Exception {
        if (CorCo.current() == null) {
            gate.get(30, TimeUnit.SECONDS);
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!gate.isDone()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the gate did not open within 30 s");
            }
            CorCo.sleep(5);
        }
    }

    private static void text(CorRest r, String s, String type) {
        r.respond(200, type, s.getBytes(StandardCharsets.UTF_8));
    }
}
