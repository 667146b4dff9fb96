package dev.cor.bench;

import java.util.concurrent.TimeUnit;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;
import dev.cor.base.CorCoTask;
import jdk.internal.vm.Continuation;
import jdk.internal.vm.ContinuationScope;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The switch against its physical limit, in one run: {@code CorCo} yield+resume against a raw
 * {@link Continuation}'s, and a pooled {@code CorCo} start-run-finish against a fresh raw
 * continuation created, run and finished - and the same two for a task that waits once. The bars:
 * yield+resume within 1.2x raw, start-run-finish no slower than fresh raw.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 4, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class CorCoSwitchBenchmark {
    private static final ContinuationScope SCOPE = new ContinuationScope("bench");
    private static final Runnable EMPTY = () -> { };

    /** A raw continuation that yields forever: each {@code run()} is one resume and one yield. */
    @State(Scope.Thread)
    public static class Raw {
        Continuation spinning;

        @Setup(Level.Trial)
        public void setUp() {
            spinning = new Continuation(SCOPE, () -> {
                while (true) {
                    Continuation.yield(SCOPE);
                }
            });
            spinning.run();
        }
    }

    /** A loop attached to the benchmark thread, with a coroutine that yields forever. */
    @State(Scope.Thread)
    public static class Co {
        CorCoLoop loop;
        CorCo spinning;
        final CorCoTask empty = () -> null;
        final CorCoTask yieldOnce = () -> {
            CorCo.yield();
            return null;
        };

        @Setup(Level.Trial)
        public void setUp() {
            loop = CorCoLoop.builder().name("bench-loop").watchdogMs(0).build().attach();
            spinning = CorCo.start(() -> {
                while (true) {
                    CorCo.yield();
                }
            });
            if (spinning == null) {
                throw new IllegalStateException("coroutines are off in this JVM: run it with the flags of BenchMain");
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            loop.stop();
            while (loop.runOnce(0)) {
                // until it has ended
            }
        }
    }

    @Benchmark
    public void rawYieldResume(Raw s) {
        s.spinning.run();
    }

    @Benchmark
    public void corCoYieldResume(Co s) {
        s.spinning.resume();
    }

    @Benchmark
    public boolean rawFreshCreateRunFinish() {
        Continuation c = new Continuation(SCOPE, EMPTY);
        c.run();
        return c.isDone();
    }

    @Benchmark
    public CorCo corCoPooledStartRunFinish(Co s) {
        return CorCo.start(s.empty);
    }

    /** The case coroutines exist for: a task that waits once. A fresh continuation run to its yield, resumed, finished. */
    @Benchmark
    public boolean rawFreshWaitOnceFinish() {
        Continuation c = new Continuation(SCOPE, YIELD_ONCE);
        c.run();
        c.run();
        return c.isDone();
    }

    /** A pooled coroutine whose task yields once: start, resume, finish. */
    @Benchmark
    public CorCo corCoPooledWaitOnceFinish(Co s) {
        CorCo co = CorCo.start(s.yieldOnce);
        co.resume();
        return co;
    }

    private static final Runnable YIELD_ONCE = () -> Continuation.yield(SCOPE);
}
