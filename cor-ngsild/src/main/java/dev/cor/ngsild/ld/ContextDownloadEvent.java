package dev.cor.ngsild.ld;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR: one {@code @context} download of the broker ({@link LdContexts}): its URL, how long it took
 * and what came of it. Begun and committed by the download itself, whoever runs it (a child
 * coroutine or a worker); downloads are rare - once per URL and TTL - so it costs nothing a
 * request pays.
 */
@StackTrace(false) // the fields say where; a stack walk per event would be cost for nothing
@Name("dev.cor.ContextDownload")
@Label("@context Download")
@Category({"cor", "NGSI-LD"})
@Description("The broker downloaded an @context document")
final class ContextDownloadEvent extends jdk.jfr.Event {
    @Label("URL")
    String url;

    @Label("Outcome")
    @Description("ok, or why it failed")
    String outcome;

    @Label("Size")
    @DataAmount
    long bytes;
}
