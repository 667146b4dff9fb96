package dev.cor.rest;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR: a request that could wait took the worker hop, and why. Committed by the dispatcher on the
 * request's loop; a hop is the slow path already, so the event costs nothing a fast request pays.
 */
@StackTrace(false) // the fields say where; a stack walk per event would be cost for nothing
@Name("dev.cor.Hop")
@Label("Worker Hop")
@Category({"cor", "Dispatch"})
@Description("A request that could wait ran on a worker instead of as a coroutine")
final class HopEvent extends jdk.jfr.Event {
    /** Why not a coroutine. */
    static final String NO_HOOK = "no coroutine hook";
    static final String HOOK_SAID_NO = "the hook said no";
    static final String CAP_REACHED = "the coroutine cap was reached";
    static final String UNAVAILABLE = "coroutines unavailable or off";

    /** Loads the class and lets JFR take it in (see the dispatcher's constructor). */
    static void prepare() {
        new HopEvent().isEnabled();
    }

    @Label("Method")
    String method;

    @Label("Path")
    String path;

    @Label("Reason")
    String reason;

    @Label("Loop")
    String loop;
}
