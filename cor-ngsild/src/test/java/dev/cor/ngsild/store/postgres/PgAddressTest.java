package dev.cor.ngsild.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@code --db} in libpq's URI form: what is read, what is refused, and that a password is never echoed. */
class PgAddressTest {

    @Test
    void theUriFormIsReadWithLibpqsDefaults() {
        assertEquals(new PgAddress("cor", "db.example", 5432, "ngsi", null), PgAddress.parse("postgresql://cor@db.example/ngsi"));
        assertEquals(new PgAddress("cor", "10.0.0.5", 6543, "ngsi", "require"),
                PgAddress.parse("postgres://cor@10.0.0.5:6543/ngsi?sslmode=require"));
        PgAddress v6 = PgAddress.parse("postgresql://cor%40ops@[::1]:5433/my%20db");
        assertEquals(new PgAddress("cor@ops", "::1", 5433, "my db", null), v6);
        assertEquals("jdbc:postgresql://[::1]:5433/my+db", v6.jdbcUrl("::1"));
        assertEquals("jdbc:postgresql://127.0.0.1:5432/ngsi?sslmode=require",
                PgAddress.parse("postgresql://cor@localhost/ngsi?sslmode=require").jdbcUrl("127.0.0.1"));
    }

    @Test
    void aPasswordInTheUriIsRefusedWithoutBeingRepeated() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PgAddress.parse("postgresql://cor:s3cr3t-Pw@db/ngsi"));
        assertFalse(e.getMessage().contains("s3cr3t"), e.getMessage());
        assertTrue(e.getMessage().contains("COR_DB_PASSWORD"), e.getMessage());
    }

    @Test
    void whatIsMissingOrUnknownIsNamed() {
        for (String[] c : new String[][] {
            {"mysql://cor@db/x", "URI is expected"},
            {"postgresql://db/x", "user is missing"},
            {"postgresql://cor@/x", "host is missing"},
            {"postgresql://cor@db", "database is missing"},
            {"postgresql://cor@db/a/b", "database is missing"},
            {"postgresql://cor@db/x?sslmode=sometimes", "only parameter taken is sslmode"},
            {"postgresql://cor@db/x?password=p", "only parameter taken is sslmode"},
        }) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PgAddress.parse(c[0]), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[0] + ": " + e.getMessage());
        }
    }
}
