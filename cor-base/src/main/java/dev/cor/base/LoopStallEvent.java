package dev.cor.base;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * JFR: a loop away from {@code select} longer than its watchdog threshold - the watchdog's
 * finding (design rule 8) as an event, committed once per stall by the watchdog thread. Off
 * unless a recording enables it (it is in JFR's default settings).
 */
@StackTrace(false) // the watchdog's own stack says nothing: the loop thread's is in 'where'
@Name("dev.cor.LoopStall")
@Label("Loop Away From Select")
@Category({"cor", "Loop"})
@Description("A loop has not come back to select for longer than its watchdog threshold: something blocks it")
final class LoopStallEvent extends jdk.jfr.Event {
    @Label("Loop")
    String loop;

    @Label("Away")
    @Timespan(Timespan.MILLISECONDS)
    long awayMs;

    @Label("Threshold")
    @Timespan(Timespan.MILLISECONDS)
    long thresholdMs;

    @Label("Where")
    @Description("The top frames of the loop thread's stack when the watchdog looked")
    String where;
}
