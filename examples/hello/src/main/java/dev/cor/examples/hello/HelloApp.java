package dev.cor.examples.hello;

import java.nio.charset.StandardCharsets;

import dev.cor.base.CorCo;
import dev.cor.rest.CorRest;
import dev.cor.rest.CorRestApplication;
import dev.cor.rest.CorRestException;

/**
 * The example's application. {@code GET /hello} cannot wait: it runs inline on the loop.
 * {@code GET /slow?ms=N} may wait: as a coroutine it sleeps on the loop (a deadline wait, the
 * loop serving everyone else), on the hop it sleeps on its worker. {@code POST /echo} answers the
 * body and its Content-Type.
 */
final class HelloApp implements CorRestApplication {
    static final long MAX_SLOW_MS = 60_000;
    private static final byte[] HELLO = "{\"hello\":\"world\"}".getBytes(StandardCharsets.UTF_8);

    @Override
    public boolean canWait(CorRest request) {
        return request.path().equals("/slow");
    }

    @Override
    public void handle(CorRest request) throws Exception {
        switch (request.path()) {
            case "/hello" -> {
                requireMethod(request, "GET");
                request.respond(200, "application/json", HELLO);
            }
            case "/slow" -> {
                requireMethod(request, "GET");
                long ms = slowMs(request);
                if (CorCo.current() != null) {
                    CorCo.sleep(ms);
                } else {
                    Thread.sleep(ms);
                }
                request.respond(200, "application/json",
                        ("{\"slept\":" + ms + "}").getBytes(StandardCharsets.UTF_8));
            }
            case "/echo" -> {
                requireMethod(request, "POST");
                String type = request.headers().get("Content-Type");
                request.respond(200, type != null ? type : "application/octet-stream", request.body());
            }
            default -> throw new CorRestException(404, "Not Found", "no resource " + request.path()
                    + " (try /hello, /slow?ms=N, POST /echo)");
        }
    }

    private static long slowMs(CorRest request) {
        String ms = request.queryParam("ms");
        try {
            long v = ms == null ? 0 : Long.parseLong(ms);
            if (v < 0 || v > MAX_SLOW_MS) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new CorRestException(400, "Bad Request", "ms must be a number of milliseconds from 0 to " + MAX_SLOW_MS);
        }
    }

    private static void requireMethod(CorRest request, String method) {
        if (!request.method().equals(method) && !(method.equals("GET") && request.method().equals("HEAD"))) {
            CorRestException e = new CorRestException(405, "Method Not Allowed", request.path() + " takes " + method);
            throw e;
        }
    }
}
