package dev.cor.base;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.cor.base.testing.ForkedJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The switch: order, results, nesting, the pool, the cap, overflow - on a loop attached to the test thread. */
class CorCoTest {
    private CorCoLoop loop;

    @BeforeEach
    void attach() {
        assertTrue(CorCoSupport.available(), "the test JVM runs with " + CorCoSupport.requiredJvmFlags());
        loop = CorCoLoop.builder().name("test-loop").build().attach();
    }

    @AfterEach
    void detach() {
        loop.stop();
        while (loop.runOnce(0)) {
            // until it has ended
        }
    }

    @Test
    void resumesAndYieldsInTheOrderAsked() {
        List<String> log = new ArrayList<>();
        CorCo a = CorCo.start(() -> {
            log.add("a1");
            CorCo.yield();
            log.add("a2");
            CorCo.yield();
            log.add("a3");
            return null;
        });
        CorCo b = CorCo.start(() -> {
            log.add("b1");
            CorCo.yield();
            log.add("b2");
            return null;
        });
        assertEquals(CorCo.State.SUSPENDED, a.state());
        assertEquals(CorCo.State.SUSPENDED, b.state());
        b.resume();
        a.resume();
        assertEquals(CorCo.State.DONE, b.state());
        assertEquals(CorCo.State.SUSPENDED, a.state());
        a.resume();
        assertEquals(CorCo.State.DONE, a.state());
        assertEquals(List.of("a1", "b1", "b2", "a2", "a3"), log);
    }

    @Test
    void createdCoroutineIsNewUntilResumed() {
        List<String> log = new ArrayList<>();
        CorCo co = CorCo.create(() -> log.add("ran"), null);
        assertEquals(CorCo.State.NEW, co.state());
        assertTrue(log.isEmpty());
        co.resume();
        assertEquals(CorCo.State.DONE, co.state());
        assertEquals(List.of("ran"), log);
    }

    @Test
    void currentIsTheRunningCoroutineAndNullOutsideOne() {
        assertNull(CorCo.current());
        AtomicReference<CorCo> seen = new AtomicReference<>();
        CorCo co = CorCo.start(() -> {
            seen.set(CorCo.current());
            CorCo.yield();
            assertSame(seen.get(), CorCo.current());
            return null;
        });
        assertSame(co, seen.get());
        assertNull(CorCo.current());
        co.resume();
        assertNull(co.error());
    }

    @Test
    void resultAndExceptionAreReportedToTheStarter() {
        List<Object> outcomes = new ArrayList<>();
        CorCoListener listener = co -> outcomes.add(co.error() != null ? co.error() : co.result());
        CorCo ok = CorCo.start(() -> {
            CorCo.yield();
            return 42;
        }, listener);
        IllegalArgumentException boom = new IllegalArgumentException("boom");
        CorCo bad = CorCo.start(() -> {
            CorCo.yield();
            throw boom;
        }, listener);
        ok.resume();
        bad.resume();
        assertEquals(List.of(42, boom), outcomes);
        assertEquals(42, ok.result());
        assertSame(boom, bad.error());
    }

    @Test
    void aTaskThatNeverWaitsIsDoneWhenStartReturns() {
        CorCo co = CorCo.start(() -> "at once");
        assertEquals(CorCo.State.DONE, co.state());
        assertEquals("at once", co.result());
        assertEquals(0, loop.liveCoroutines());
    }

    @Test
    void aChildThatYieldsReturnsControlToItsStarter() {
        List<String> log = new ArrayList<>();
        AtomicReference<CorCo> child = new AtomicReference<>();
        CorCo parent = CorCo.start(() -> {
            log.add("parent starts child");
            child.set(CorCo.start(() -> {
                log.add("child runs");
                CorCo.yield();
                log.add("child resumed by the loop");
                return "child done";
            }));
            log.add("parent goes on while the child waits");
            assertEquals(CorCo.State.SUSPENDED, child.get().state());
            CorCo.yield();
            log.add("parent resumed");
            return null;
        });
        assertEquals(CorCo.State.SUSPENDED, parent.state());
        child.get().resume();
        assertEquals("child done", child.get().result());
        parent.resume();
        assertEquals(List.of("parent starts child", "child runs", "parent goes on while the child waits",
                "child resumed by the loop", "parent resumed"), log);
    }

    @Test
    void aChildInheritsItsStartersContextAndAFinishedCoroutineForgetsIt() {
        AtomicReference<Object> childSaw = new AtomicReference<>();
        CorCo parent = CorCo.start(() -> {
            CorCo.current().context("request-1");
            CorCo.start(() -> {
                childSaw.set(CorCo.current().context());
                return null;
            });
            return CorCo.current().context();
        });
        assertEquals("request-1", parent.result());
        assertEquals("request-1", childSaw.get());
        assertNull(parent.context(), "cleared when its task ended");
        CorCo plain = CorCo.start(() -> CorCo.current().context());
        assertNull(plain.result(), "a coroutine started outside one has none");
    }

    @Test
    void aCoroutineOnTheStackCannotBeResumedAgain() {
        CorCo co = CorCo.start(() -> {
            CorCo self = CorCo.current();
            return assertThrows(IllegalStateException.class, self::resume).getMessage();
        });
        assertTrue(((String) co.result()).contains("refused"), String.valueOf(co.result()));
    }

    @Test
    void poolReusesAFinishedCoroutineForTheNextTask() {
        CorCo first = CorCo.start(() -> 1);
        long firstId = first.taskId();
        CorCo second = CorCo.start(() -> 2);
        assertSame(first, second, "the finished coroutine ran the next task");
        assertTrue(second.taskId() > firstId);
        assertEquals(1, loop.pooledCoroutines());
    }

    @Test
    void steadyStateStartRunFinishAllocatesNoContinuation() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        CorCoTask task = () -> null;
        for (int i = 0; i < 20_000; i++) { // warm up: the pool and the JIT
            CorCo.start(task);
        }
        long tid = Thread.currentThread().threadId();
        int n = 100_000;
        long before = mx.getThreadAllocatedBytes(tid);
        for (int i = 0; i < n; i++) {
            CorCo.start(task);
        }
        long perTask = (mx.getThreadAllocatedBytes(tid) - before) / n;
        // A fresh Continuation alone is ~240 bytes, with its first stack chunk more.
        assertTrue(perTask < 64, "a pooled start-run-finish allocated " + perTask + " bytes");
    }

    @Test
    void capRefusesAStartPastItAndAdmitsOneAfterAFinish() {
        CorCoLoop capped = null;
        loop.stop();
        while (loop.runOnce(0)) {
            // end the default loop: one loop per thread
        }
        capped = CorCoLoop.builder().name("capped").coroutineCap(2).build().attach();
        try {
            CorCo a = CorCo.start(() -> {
                CorCo.yield();
                return null;
            });
            CorCo b = CorCo.start(() -> {
                CorCo.yield();
                return null;
            });
            assertNotNull(a);
            assertNotNull(b);
            assertNull(CorCo.start(() -> null), "a third start past the cap is refused");
            assertEquals(1, capped.refusedCoroutines());
            a.resume();
            assertNotNull(CorCo.start(() -> null), "a start fits again once one finished");
            b.resume();
        } finally {
            loop = capped;
        }
    }

    @Test
    void capZeroTurnsCoroutinesOff() {
        loop.stop();
        while (loop.runOnce(0)) {
            // end the default loop
        }
        loop = CorCoLoop.builder().name("off").coroutineCap(0).build().attach();
        assertNull(CorCo.start(() -> null));
        assertEquals(0, loop.coroutineCap());
    }

    @Test
    void stackOverflowFailsThatCoroutineAloneWithAnErrorNamingIt() {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CorCo deep = CorCo.start(() -> recurse(0), co -> failure.set(co.error()));
        CorCoException e = assertInstanceOf(CorCoException.class, failure.get());
        assertTrue(e.getMessage().contains("stack overflow") && e.getMessage().contains("@test-loop"), e.getMessage());
        assertInstanceOf(StackOverflowError.class, e.getCause());
        assertEquals(CorCo.State.DONE, deep.state());
        assertEquals(0, loop.liveCoroutines());
        assertEquals(0, loop.pooledCoroutines(), "the continuation that overflowed went back to the pool");

        CorCo next = CorCo.start(() -> {
            CorCo.yield();
            return "next ran";
        });
        next.resume();
        assertEquals("next ran", next.result());
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }

    @Test
    void aLockHeldAcrossAYieldIsAllowedWithoutDebug() {
        assertFalse(CorCo.DEBUG, "this JVM runs without -Dcor.debug");
        CorCoLock lock = new CorCoLock();
        CorCo co = CorCo.start(() -> {
            lock.lock();
            try {
                CorCo.yield();
            } finally {
                lock.unlock();
            }
            return "yielded";
        });
        co.resume();
        assertEquals("yielded", co.result());
    }

    @Test
    void aLockHeldAcrossAYieldFailsInDebugMode() throws Exception {
        ForkedJvm jvm = ForkedJvm.run(LockRuleMain.class,
                List.of(CorCoSupport.requiredJvmFlags(), "-Dcor.debug=true"));
        assertEquals(0, jvm.exitCode, jvm.toString());
        assertTrue(jvm.stdout.contains("refused: co-1@lock-loop yields holding 1 CorCoLock(s)"), jvm.toString());
        assertTrue(jvm.stdout.contains("without the lock: yielded"), jvm.toString());
    }

    @Test
    void resumeFromAnotherThreadIsRefused() throws Exception {
        CorCo co = CorCo.start(() -> {
            CorCo.yield();
            return null;
        });
        CompletableFuture<Throwable> f = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                co.resume();
                f.complete(null);
            } catch (Throwable t) {
                f.complete(t);
            }
        });
        Throwable t = f.get(10, TimeUnit.SECONDS);
        assertInstanceOf(IllegalStateException.class, t);
        assertTrue(t.getMessage().contains("only its loop's thread"), t.getMessage());
        assertEquals(CorCo.State.SUSPENDED, co.state());
        co.resume();
        assertEquals(CorCo.State.DONE, co.state());
    }

    @Test
    void startOutsideALoopThreadIsAClearError() throws Exception {
        CompletableFuture<Throwable> f = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                CorCo.start(() -> null);
                f.complete(null);
            } catch (Throwable t) {
                f.complete(t);
            }
        });
        Throwable t = f.get(10, TimeUnit.SECONDS);
        assertInstanceOf(IllegalStateException.class, t);
        assertTrue(t.getMessage().contains("not a loop thread"), t.getMessage());
    }

    @Test
    void aRoundOfAnAttachedLoopWaitsAtMostItsMaxWait() {
        CorCo.start(() -> {
            CorCo.sleep(60_000);
            return null;
        });
        for (long maxWait : new long[] {0, 50}) {
            long t0 = System.nanoTime();
            assertTrue(loop.runOnce(maxWait));
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(ms < 10_000, "runOnce(" + maxWait + ") waited " + ms + " ms: for the 60 s deadline");
        }
    }

    @Test
    void waitsOutsideACoroutineAreClearErrors() throws Exception {
        java.nio.channels.Pipe p = java.nio.channels.Pipe.open();
        try {
            p.source().configureBlocking(false);
            List<org.junit.jupiter.api.function.Executable> waits = List.of(CorCo::yield, () -> CorCo.sleep(1),
                    () -> CorCo.park(1), () -> CorCo.waitFd(p.source(), java.nio.channels.SelectionKey.OP_READ, 1));
            for (var wait : waits) {
                IllegalStateException e = assertThrows(IllegalStateException.class, wait);
                assertTrue(e.getMessage().contains("called outside a coroutine (thread "), e.getMessage());
            }
            assertNull(loop.keyFor(p.source()), "the refused waitFd registered the channel");
        } finally {
            p.source().close();
            p.sink().close();
        }
    }

    @Test
    void withoutTheExportCoroutinesAreOffWithOneLineAndTheHopRunsTheTask() throws Exception {
        ForkedJvm jvm = ForkedJvm.run(FallbackMain.class, List.of());
        assertEquals(0, jvm.exitCode, jvm.toString());
        assertTrue(jvm.stdout.contains("start refused; hop ran: 42"), jvm.toString());
        long lines = jvm.stderr.lines().filter(l -> l.contains("coroutines off")).count();
        assertEquals(1, lines, jvm.toString());
        assertTrue(jvm.stderr.contains("--add-exports=java.base/jdk.internal.vm=ALL-UNNAMED"), jvm.toString());
    }
}
