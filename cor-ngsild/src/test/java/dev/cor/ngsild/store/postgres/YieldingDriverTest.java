package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.cor.base.CorCo;
import dev.cor.base.CorCoLoop;

/**
 * pgjdbc over {@link YieldingSocketFactory}, against a real PostgreSQL started for the test: a
 * statement that waits on the database yields its coroutine, so one loop runs 64 of them at once
 * and keeps serving its other coroutines meanwhile; the per-loop pool gives each connection to one
 * coroutine at a time, makes the others wait their turn within a deadline, and replaces a broken
 * connection; on a plain thread the same driver blocks, as any JDBC driver does.
 */
class YieldingDriverTest {
    @TempDir
    static Path tmp;
    static PostgresCluster db;
    static final org.postgresql.Driver DRIVER = new org.postgresql.Driver();

    @BeforeAll
    static void startDatabase() throws Exception {
        db = PostgresCluster.start(tmp);
    }

    @AfterAll
    static void stopDatabase() throws Exception {
        if (db != null) {
            db.close();
        }
    }

    static Connection connect(String extra) throws SQLException {
        return DRIVER.connect(db.url() + extra, new Properties());
    }

    /** Runs {@code task} as a coroutine of {@code loop} and returns its result to the test's thread. */
    static <T> T onLoop(CorCoLoop loop, java.util.concurrent.Callable<T> task) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> CorCo.start(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
            return null;
        }));
        return f.get(60, TimeUnit.SECONDS);
    }

    @Test
    void sixtyFourSleepsOnOneLoopTakeAboutOneSleepWhileTheLoopServesItsOtherCoroutines() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("pg-64").build().start();
        LoopConnectionPool pool = new LoopConnectionPool(loop, 64, () -> connect(""));
        try {
            // the 64 connections opened first (their startup yields too), then given back idle
            onLoop(loop, () -> {
                List<Connection> all = new java.util.ArrayList<>();
                for (int k = 0; k < 64; k++) {
                    all.add(pool.checkout(10_000));
                }
                all.forEach(c -> pool.release(c, false));
                return null;
            });
            assertEquals(64, pool.idle());

            int n = 64;
            CountDownLatch done = new CountDownLatch(n);
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            AtomicInteger ticks = new AtomicInteger();
            AtomicInteger running = new AtomicInteger(n);
            long[] slept = new long[n];
            long t0 = System.nanoTime();
            loop.execute(() -> {
                // another coroutine of the same loop: it ticks every 5 ms as long as the sleeps run
                CorCo.start(() -> {
                    while (running.get() > 0) {
                        CorCo.sleep(5);
                        ticks.incrementAndGet();
                    }
                    return null;
                });
                for (int k = 0; k < n; k++) {
                    int i = k;
                    CorCo.start(() -> {
                        try {
                            Connection c = pool.checkout(5_000);
                            long s0 = System.nanoTime();
                            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_sleep(0.2), 1")) {
                                rs.next();
                                assertEquals(1, rs.getInt(2));
                            } finally {
                                pool.release(c, false);
                            }
                            slept[i] = System.nanoTime() - s0;
                        } catch (Throwable e) {
                            failures.add(e);
                        } finally {
                            running.decrementAndGet();
                            done.countDown();
                        }
                        return null;
                    });
                }
            });
            assertTrue(done.await(30, TimeUnit.SECONDS), "the 64 statements ended");
            long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(List.of(), List.copyOf(failures));
            for (long s : slept) {
                assertTrue(s >= 190_000_000L, "each statement waited its 0.2 s on the database: " + s / 1_000_000 + " ms");
            }
            // one after the other they would take 64 x 0.2 = 12.8 s; together about 0.2 s (two cores, other tests)
            assertTrue(elapsedMs < 2_000, "64 sleeps of 0.2 s on one loop took " + elapsedMs + " ms");
            // the loop served its ticker all along: 0.2 s at one tick per 5 ms is about 40 ticks
            assertTrue(ticks.get() >= 15, "the loop ran its other coroutine while the statements waited: " + ticks.get()
                    + " ticks in " + elapsedMs + " ms");
        } finally {
            onLoop(loop, () -> {
                pool.close();
                return null;
            });
            loop.stop();
            loop.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aFullPoolServesItsWaitersInTurnAndRefusesPastTheirDeadline() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("pg-2").build().start();
        LoopConnectionPool pool = new LoopConnectionPool(loop, 2, () -> connect(""));
        try {
            int n = 6;
            CountDownLatch done = new CountDownLatch(n + 1);
            ConcurrentLinkedQueue<Object> outcomes = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<String> order = new ConcurrentLinkedQueue<>();
            long t0 = System.nanoTime();
            loop.execute(() -> {
                for (int k = 0; k < n; k++) {
                    int i = k;
                    CorCo.start(() -> {
                        try {
                            Connection c = pool.checkout(5_000);
                            order.add("start " + i);
                            try (Statement st = c.createStatement()) {
                                st.execute("SELECT pg_sleep(0.1)");
                            } finally {
                                pool.release(c, false);
                            }
                            outcomes.add("ok");
                        } catch (Throwable e) {
                            outcomes.add(e);
                        } finally {
                            done.countDown();
                        }
                        return null;
                    });
                }
                // one more, with a deadline shorter than its turn: it is refused, the others are not held up
                CorCo.start(() -> {
                    try {
                        pool.release(pool.checkout(50), false);
                        outcomes.add("the impatient one got a connection");
                    } catch (Throwable e) {
                        outcomes.add(e);
                    } finally {
                        done.countDown();
                    }
                    return null;
                });
            });
            assertTrue(done.await(30, TimeUnit.SECONDS));
            long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
            List<Object> all = List.copyOf(outcomes);
            assertEquals(n, all.stream().filter("ok"::equals).count(), all.toString());
            assertInstanceOf(SQLTransientConnectionException.class, all.stream().filter(o -> !"ok".equals(o)).findFirst()
                    .orElseThrow());
            // three turns of 0.1 s on two connections: the pool never opened a third
            assertTrue(elapsedMs >= 290, "six statements on two connections took " + elapsedMs + " ms");
            // the first two open their connections (which of the two connects first is the network's);
            // the four that waited are served in the order they came
            List<String> starts = List.copyOf(order);
            assertEquals(java.util.Set.of("start 0", "start 1"), java.util.Set.copyOf(starts.subList(0, 2)));
            assertEquals(List.of("start 2", "start 3", "start 4", "start 5"), starts.subList(2, 6), "first come, first served");
            assertEquals(2, onLoop(loop, pool::open));
        } finally {
            onLoop(loop, () -> {
                pool.close();
                return null;
            });
            loop.stop();
            loop.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aReadPastTheSocketTimeoutFailsAndTheBrokenConnectionIsReplaced() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("pg-timeout").build().start();
        LoopConnectionPool pool = new LoopConnectionPool(loop, 1, () -> connect("&socketTimeout=1"));
        try {
            Object outcome = onLoop(loop, () -> {
                Connection c = pool.checkout(5_000);
                try (Statement st = c.createStatement()) {
                    st.execute("SELECT pg_sleep(3)");
                    pool.release(c, false);
                    return "answered";
                } catch (SQLException e) {
                    pool.release(c, true); // its state is unknown: closed, its place free
                    return e;
                }
            });
            SQLException e = assertInstanceOf(SQLException.class, outcome);
            assertInstanceOf(java.net.SocketTimeoutException.class, e.getCause(), e.toString());
            assertEquals(0, onLoop(loop, pool::open));
            assertEquals(7, (int) onLoop(loop, () -> {
                Connection c = pool.checkout(5_000);
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 7")) {
                    rs.next();
                    return rs.getInt(1);
                } finally {
                    pool.release(c, false);
                }
            }), "a new connection took the broken one's place");
        } finally {
            onLoop(loop, () -> {
                pool.close();
                return null;
            });
            loop.stop();
            loop.awaitTermination(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void onAPlainThreadTheSameDriverBlocksAsAnyOther() throws Exception {
        try (Connection c = connect(""); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT current_setting('server_version_num')::int")) {
            rs.next();
            assertTrue(rs.getInt(1) >= 150000, "PostgreSQL 15 or newer: " + rs.getInt(1));
        }
    }
}
