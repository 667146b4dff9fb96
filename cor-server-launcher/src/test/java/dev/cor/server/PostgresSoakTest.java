package dev.cor.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

import dev.cor.ngsild.store.postgres.PostgresCluster;

/**
 * {@link BrokerSoakTest}'s soak, the broker over the PostgreSQL store ({@code --store postgres} on
 * a cluster of the test's own): every request of the hostile load a coroutine waiting on the
 * database, and the same bars - threads, open fds and the heap after a full GC back near the warm
 * baseline, {@code /health} in time throughout, every entity showing its last acknowledged write.
 * The connections to the database are among the fds counted: a leaked one fails the bar.
 */
@Tag("process")
class PostgresSoakTest extends BrokerSoakTest {
    private static PostgresCluster cluster;
    private static Path dir;

    @Override
    List<String> storeFlags() throws Exception {
        dir = Files.createTempDirectory("cor-soak-pg");
        cluster = PostgresCluster.start(dir);
        return List.of("--store", "postgres", "--db", cluster.createDatabase("cor_soak"), "--dbPoolPerLoop", "16");
    }

    /**
     * The database connections come on top: each loop's pool and the helper threads' may each still
     * grow to their bound (16) after the warm-up - opened on demand, kept while the broker lives -
     * which is not a leak; a connection leaked per request passes it within seconds.
     */
    @Override
    int fdMargin() {
        return super.fdMargin() + (Runtime.getRuntime().availableProcessors() + 1) * 16;
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }
}
