package dev.cor.ngsild.conformance;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every case of {@link QueryEntitiesTest} against a broker over the PostgreSQL store: its queries go
 * through the query push-down (scans, sizes, value lookups, boxes answered by the database's
 * indexes) and must answer as over the memory store.
 */
@ExtendWith(PostgresQueries.class)
class PostgresQueryEntitiesTest extends QueryEntitiesTest {
}
