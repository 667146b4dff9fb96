package dev.cor.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of a wake through the loop against a thread hand-off. The benchmark thread writes a
 * byte into a pipe and waits for the answer on a second pipe; on the other end either a coroutine
 * waits on the pipe through its loop ({@code CorCo.waitFd}) or a platform thread is blocked in a
 * read. Same pipes, same answer; only the waiting side differs.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@State(Scope.Benchmark)
public class LoopRoundTripBenchmark {
    @Param({"coroutine", "thread"})
    public String waiter;

    private Pipe request;
    private Pipe answer;
    private CorCoLoop loop;
    private Thread thread;
    private final ByteBuffer out = ByteBuffer.allocateDirect(1);
    private final ByteBuffer in = ByteBuffer.allocateDirect(1);

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        request = Pipe.open();
        answer = Pipe.open();
        if (waiter.equals("coroutine")) {
            request.source().configureBlocking(false);
            loop = CorCoLoop.builder().name("bench-loop").watchdogMs(0).build().start();
            loop.execute(() -> CorCo.start(this::echoOnTheLoop));
        } else {
            thread = Thread.ofPlatform().name("bench-waiter").daemon().start(this::echoOnAThread);
        }
    }

    private Object echoOnTheLoop() throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(1);
        while (true) {
            b.clear();
            int r = request.source().read(b);
            if (r == 0) {
                CorCo.waitFd(request.source(), SelectionKey.OP_READ, -1);
                continue;
            }
            if (r < 0) {
                return null;
            }
            b.flip();
            answer.sink().write(b);
        }
    }

    private void echoOnAThread() {
        ByteBuffer b = ByteBuffer.allocateDirect(1);
        try {
            while (true) {
                b.clear();
                if (request.source().read(b) < 0) {
                    return;
                }
                b.flip();
                answer.sink().write(b);
            }
        } catch (IOException e) {
            // closed at tear-down
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        request.sink().close();
        if (loop != null) {
            loop.stop();
            loop.awaitTermination(5, TimeUnit.SECONDS);
        }
        if (thread != null) {
            thread.join(5000);
        }
        request.source().close();
        answer.sink().close();
        answer.source().close();
    }

    @Benchmark
    public int roundTrip() throws IOException {
        out.clear();
        out.put((byte) 1).flip();
        request.sink().write(out);
        in.clear();
        return answer.source().read(in);
    }
}
