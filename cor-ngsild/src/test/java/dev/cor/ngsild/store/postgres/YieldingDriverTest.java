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
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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

    /** Answers {@code /health} inline on its loop: what must keep coming while the loop's coroutines wait on the database. */
    static final class Health implements dev.cor.rest.CorRestApplication {
        @Override
        public boolean canWait(dev.cor.rest.CorRest request) {
            return false;
        }

        @Override
        public void handle(dev.cor.rest.CorRest request) {
            request.respond(200, "text/plain", "ok".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        }
    }

    @Test
    void sixtyFourSleepsOnOneLoopTakeAboutOneSleepWhileTheLoopAnswersHealth() throws Exception {
        dev.cor.http.CorHttpServer server = dev.cor.http.CorHttpServer.builder().host("127.0.0.1").port(0).loops(1)
                .application(new Health()).build().start();
        CorCoLoop loop = server.loops().get(0);
        LoopConnectionPool pool = new LoopConnectionPool(loop, 64, () -> connect(""));
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.http.HttpRequest health = java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + server.port() + "/health")).timeout(java.time.Duration.ofSeconds(5)).build();
        try {
            // the 64 connections opened first (their startup yields too), then given back idle
            LoopTesting.onLoop(loop, () -> {
                List<Connection> all = new java.util.ArrayList<>();
                for (int k = 0; k < 64; k++) {
                    all.add(pool.checkout(10_000));
                }
                all.forEach(c -> pool.release(c, false));
                return null;
            });
            assertEquals(64, pool.idle());
            http.send(health, java.net.http.HttpResponse.BodyHandlers.ofString()); // the client's own start, not timed

            int n = 64;
            CountDownLatch done = new CountDownLatch(n);
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            long[] slept = new long[n];
            long t0 = System.nanoTime();
            loop.execute(() -> {
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
                            done.countDown();
                        }
                        return null;
                    });
                }
            });
            // while the 64 wait on the database, the same loop answers /health, one request after the other
            int answered = 0;
            long slowestMs = 0;
            while (done.getCount() > 0 && (System.nanoTime() - t0) < 150_000_000L) {
                long h0 = System.nanoTime();
                var r = http.send(health, java.net.http.HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode());
                slowestMs = Math.max(slowestMs, (System.nanoTime() - h0) / 1_000_000);
                answered++;
            }
            boolean stillWaiting = done.getCount() > 0;
            assertTrue(done.await(30, TimeUnit.SECONDS), "the 64 statements ended");
            long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(List.of(), List.copyOf(failures));
            for (long s : slept) {
                assertTrue(s >= 190_000_000L, "each statement waited its 0.2 s on the database: " + s / 1_000_000 + " ms");
            }
            // one after the other they would take 64 x 0.2 = 12.8 s; together about 0.2 s (two cores, other tests)
            assertTrue(elapsedMs < 2_000, "64 sleeps of 0.2 s on one loop took " + elapsedMs + " ms");
            assertTrue(stillWaiting && answered >= 3, "the loop answered /health " + answered
                    + " times while the statements waited (slowest " + slowestMs + " ms)");
        } finally {
            LoopTesting.onLoop(loop, () -> {
                pool.close();
                return null;
            });
            server.stop(1000);
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
            assertEquals(2, LoopTesting.onLoop(loop, pool::open));
        } finally {
            LoopTesting.stop(loop, pool::close);
        }
    }

    @Test
    void aReadPastTheSocketTimeoutFailsAndTheBrokenConnectionIsReplaced() throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("pg-timeout").build().start();
        LoopConnectionPool pool = new LoopConnectionPool(loop, 1, () -> connect("&socketTimeout=1"));
        try {
            Object outcome = LoopTesting.onLoop(loop, () -> {
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
            assertEquals(0, LoopTesting.onLoop(loop, pool::open));
            assertEquals(7, (int) LoopTesting.onLoop(loop, () -> {
                Connection c = pool.checkout(5_000);
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT 7")) {
                    rs.next();
                    return rs.getInt(1);
                } finally {
                    pool.release(c, false);
                }
            }), "a new connection took the broken one's place");
        } finally {
            LoopTesting.stop(loop, pool::close);
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
