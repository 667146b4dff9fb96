package dev.cor.rest;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;

/**
 * JFR: a request's coroutine that lived longer than the threshold (default 500 ms; a recording's
 * settings change it: {@code dev.cor.LongCoroutine#threshold=100 ms}). Begun when the coroutine
 * starts - only while a recording enables the event, so a server without one allocates nothing
 * for it - and committed as it ends, if it lasted long enough. Its loop's thread only.
 */
@StackTrace(false) // the fields say where; a stack walk per event would be cost for nothing
@Name("dev.cor.LongCoroutine")
@Label("Long-Lived Coroutine")
@Category({"cor", "Dispatch"})
@Description("A request ran as a coroutine for longer than the threshold")
@Threshold("500 ms")
final class LongCoroutineEvent extends jdk.jfr.Event {
    private static final jdk.jfr.EventType TYPE = jdk.jfr.EventType.getEventType(LongCoroutineEvent.class);

    @Label("Method")
    String method;

    @Label("Path")
    String path;

    @Label("Loop")
    String loop;

    /** Loads the class (see the dispatcher's constructor). */
    static void prepare() {
        // the class initialiser above has run
    }

    /** A begun event when a recording wants it, else {@code null}. */
    static LongCoroutineEvent beginIfEnabled() {
        if (!TYPE.isEnabled()) {
            return null;
        }
        LongCoroutineEvent e = new LongCoroutineEvent();
        e.begin();
        return e;
    }

    void end(CorRest request, String loopName) {
        end();
        if (shouldCommit()) {
            method = request.method();
            path = request.path();
            loop = loopName;
            commit();
        }
    }
}
