package dev.cor.ngsild.conformance;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.cor.ngsild.store.postgres.PostgresTestStores;

/**
 * Every case of {@link TemporalApiTest} against a broker over PostgreSQL: the entities and their
 * history in a fresh database of the tests' cluster, answering as the memory store's do.
 */
class PostgresTemporalApiTest extends TemporalApiTest {
    private static PostgresTestStores.Opened postgres;

    @BeforeAll
    static void overPostgres() {
        postgres = PostgresTestStores.open(true);
        overStore(postgres.store());
    }

    @AfterAll
    static void closeTheStore() throws Exception {
        if (broker != null) {
            broker.close();
            broker = null;
        }
        if (postgres != null) {
            postgres.close().close();
        }
    }
}
