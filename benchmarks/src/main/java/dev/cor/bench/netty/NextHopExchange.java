package dev.cor.bench.netty;

import java.util.function.Supplier;

import io.netty.channel.Channel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * One forwarded request on its way to the next hop and back: how to build the outbound request
 * (again, for the one retry a reused connection gets), whom to tell, and its deadline. Lives on
 * one event loop and is finished exactly once, by an answer or a failure.
 */
final class NextHopExchange {
    /** What the forwarding side hears; called on the event loop, exactly once. */
    interface Outcome {
        /** The next hop answered; {@code response} is valid during the call only (retain what you keep). */
        void answered(FullHttpResponse response);

        /** No answer: connect failure, reset, protocol error or deadline. */
        void failed(String reason);
    }

    final Supplier<FullHttpRequest> request;
    private final Outcome outcome;
    ScheduledFuture<?> deadline;
    /** The connection of the current attempt, once it has one. */
    Channel channel;
    /** Whether the current attempt went out on a pooled connection: a stale one earns one retry. */
    boolean onReusedConnection;
    boolean retried;
    private boolean finished;

    NextHopExchange(Supplier<FullHttpRequest> request, Outcome outcome) {
        this.request = request;
        this.outcome = outcome;
    }

    boolean finished() {
        return finished;
    }

    void answer(FullHttpResponse response) {
        if (finish()) {
            outcome.answered(response);
        }
    }

    void fail(String reason) {
        if (finish()) {
            outcome.failed(reason);
        }
    }

    private boolean finish() {
        if (finished) {
            return false;
        }
        finished = true;
        if (deadline != null) {
            deadline.cancel(false);
        }
        return true;
    }
}
