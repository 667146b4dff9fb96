package dev.cor.rest.proto;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR: a {@code cor://} connection opened (HELLO-ACK), closed, or ended by a GOAWAY sent or
 * received - on either side. Committed by the connection's owner (its loop or its thread);
 * nothing per request.
 */
@StackTrace(false) // the fields say where; a stack walk per event would be cost for nothing
@Name("dev.cor.ProtoConnection")
@Label("cor:// Connection")
@Category({"cor", "cor://"})
@Description("A cor:// connection opened, closed, or sent or received GOAWAY")
final class ProtoConnectionEvent extends jdk.jfr.Event {
    static final String OPENED = "opened";
    static final String CLOSED = "closed";
    static final String GOAWAY_SENT = "GOAWAY sent";
    static final String GOAWAY_RECEIVED = "GOAWAY received";

    @Label("Side")
    @Description("client or server")
    String side;

    @Label("Peer")
    String peer;

    @Label("What")
    String what;

    @Label("Code")
    @Description("The GOAWAY's code, if any")
    String code;

    @Label("Reason")
    String reason;

    /** Loads the class and lets JFR take it in, on the thread that builds a server or a client. */
    static void prepare() {
        new ProtoConnectionEvent().isEnabled();
    }

    static void emit(String side, String peer, String what, CorProtoError code, String reason) {
        ProtoConnectionEvent e = new ProtoConnectionEvent();
        if (e.isEnabled()) {
            e.side = side;
            e.peer = peer;
            e.what = what;
            e.code = code == null ? null : code.name();
            e.reason = reason;
            e.commit();
        }
    }
}
