package dev.cor.ngsild.store.postgres;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

import dev.cor.ngsild.ld.ContextKeeper;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.ValueLookup;
import dev.cor.ngsild.store.EntityChange;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.EntityWrite;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.store.TemporalRetention;
import dev.cor.ngsild.store.TemporalStore;
import dev.cor.ngsild.store.WriteObserver;

/**
 * The broker's store in a PostgreSQL database (15 or newer) that several brokers may share:
 * entities, their history, subscriptions, registrations, Hosted contexts and tenants
 * (doc/storage.md, "PostgreSQL"). Opened with {@link #builder}: the host is resolved once, the
 * schema made or brought up to date, the tenants read, and a follower started that keeps this
 * broker current with the others' subscriptions, registrations, contexts and tenants.
 * <p>
 * Every call but {@link #hasTenant}, {@link #tenants} and {@link #ready} is a round trip to the
 * database ({@link #readsWait()}): inside a coroutine of a loop it yields, on any other thread it
 * blocks, each with a deadline; on a loop outside a coroutine it is refused. Any thread;
 * {@link #close} once, when the broker has stopped.
 */
public final class PostgresEntityStore implements EntityStore, AutoCloseable {
    private final PgDatabase db;
    private final PgFollower follower;
    private final PgEntityStore entities;
    private final PgKeepers keepers;
    private final String where;

    private PostgresEntityStore(PgDatabase db, PgFollower follower, PgEntityStore entities, PgKeepers keepers, String where) {
        this.db = db;
        this.follower = follower;
        this.entities = entities;
        this.keepers = keepers;
        this.where = where;
    }

    /** A store over the database at {@code uri}, libpq's form {@code postgresql://USER@HOST[:PORT]/DB[?sslmode=MODE]}. */
    public static Builder builder(String uri) {
        return new Builder(PgAddress.parse(uri));
    }

    /** How a {@link PostgresEntityStore} is opened. Not thread-safe; used once. */
    public static final class Builder {
        private final PgAddress address;
        private String password;
        private int poolPerLoop = 8;
        private long waitMs = 5_000;
        private long statementTimeoutMs = 10_000;
        private long historyMaxAgeMs = Long.MAX_VALUE;

        private Builder(PgAddress address) {
            this.address = address;
        }

        /** The database's address as the operator wrote it (there is no password in it): for messages. */
        @Override
        public String toString() {
            return address.toString();
        }

        /** The role's password ({@code null}: none - trust or peer authentication). Never logged. */
        public Builder password(String password) {
            this.password = password;
            return this;
        }

        /** Connections per loop (and for the plain threads together); default 8. */
        public Builder poolPerLoop(int n) {
            if (n < 1 || n > 1_000) {
                throw new IllegalArgumentException("the pool per loop must be 1 to 1000 connections: " + n);
            }
            this.poolPerLoop = n;
            return this;
        }

        /** How long a request waits for a free connection, and to connect; default 5 s. */
        public Builder waitMs(long ms) {
            if (ms < 1) {
                throw new IllegalArgumentException("the wait must be positive: " + ms);
            }
            this.waitMs = ms;
            return this;
        }

        /** The server's deadline for one statement ({@code statement_timeout}); default 10 s. */
        public Builder statementTimeoutMs(long ms) {
            if (ms < 1) {
                throw new IllegalArgumentException("the statement timeout must be positive: " + ms);
            }
            this.statementTimeoutMs = ms;
            return this;
        }

        /**
         * How long a history instance is kept after it was recorded, milliseconds (default: for
         * ever). The history has no byte bound here: the database's disk is the bound.
         */
        public Builder historyMaxAgeMs(long ms) {
            if (ms < 1) {
                throw new IllegalArgumentException("the history's age must be positive: " + ms);
            }
            this.historyMaxAgeMs = ms;
            return this;
        }

        /**
         * Resolves the host (once: a name is never resolved on a loop), connects, makes or migrates
         * the schema, reads the tenants and starts following the other brokers. On a plain thread.
         *
         * @throws SQLException the database cannot be reached, refuses the role, or holds a schema
         *                      of a newer broker (its SQLState and message say which; never the password)
         */
        public PostgresEntityStore open() throws SQLException {
            String ip;
            try {
                ip = InetAddress.getByName(address.host()).getHostAddress();
            } catch (UnknownHostException e) {
                throw new SQLException("the database host " + address.host() + " is not known", "08001", e);
            }
            PgDatabase db = new PgDatabase(address.jdbcUrl(ip), address.user(), password, poolPerLoop, waitMs, statementTimeoutMs);
            try (Connection c = db.open()) {
                PgSchema.MIGRATIONS.migrate(c);
            } catch (SQLException | RuntimeException e) {
                db.close();
                throw e;
            }
            PgFollower follower = new PgFollower(db);
            PgTemporalStore history = new PgTemporalStore(db, new TemporalRetention(historyMaxAgeMs, Long.MAX_VALUE),
                    System::currentTimeMillis);
            PgEntityStore entities;
            try {
                history.reloadTenants();
                entities = new PgEntityStore(db, follower, history);
                entities.reloadTenants();
            } catch (RuntimeException e) {
                db.close();
                throw e;
            }
            PgKeepers keepers = new PgKeepers(db, follower);
            follower.versionFrom(keepers::version);
            follower.start();
            return new PostgresEntityStore(db, follower, entities, keepers, address.toString());
        }
    }

    /** Its waits yield inside a coroutine. */
    @Override
    public boolean blocks() {
        return false;
    }

    @Override
    public boolean readsWait() {
        return true;
    }

    @Override
    public boolean writesWait() {
        return true;
    }

    /** False while the database cannot be reached (the follower's connection is down). */
    @Override
    public boolean ready() {
        return follower.ready();
    }

    @Override
    public boolean hasTenant(String tenant) {
        return entities.hasTenant(tenant);
    }

    @Override
    public boolean hasTenantNow(String tenant) {
        return entities.hasTenantNow(tenant);
    }

    @Override
    public Set<String> tenants() {
        return entities.tenants();
    }

    @Override
    public void createTenant(String tenant) {
        entities.createTenant(tenant);
    }

    @Override
    public Entity get(String tenant, String id) {
        return entities.get(tenant, id);
    }

    @Override
    public EntityWrite write(String tenant, String id, EntityChange change, WriteObserver observer) {
        return entities.write(tenant, id, change, observer);
    }

    @Override
    public void forEach(String tenant, String type, Consumer<Entity> visitor) {
        entities.forEach(tenant, type, visitor);
    }

    @Override
    public int count(String tenant) {
        return entities.count(tenant);
    }

    @Override
    public void scan(String tenant, Index index, String key, Predicate<Entity> visitor) {
        entities.scan(tenant, index, key, visitor);
    }

    @Override
    public int size(String tenant, Index index, String key) {
        return entities.size(tenant, index, key);
    }

    @Override
    public List<String> idsWithValues(String tenant, ValueLookup lookup, int max) {
        return entities.idsWithValues(tenant, lookup, max);
    }

    @Override
    public Collection<String> idsInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon,
            double maxLat) {
        return entities.idsInBox(tenant, geoproperty, minLon, minLat, maxLon, maxLat);
    }

    @Override
    public int sizeInBox(String tenant, String geoproperty, double minLon, double minLat, double maxLon, double maxLat) {
        return entities.sizeInBox(tenant, geoproperty, minLon, minLat, maxLon, maxLat);
    }

    @Override
    public Set<String> keys(String tenant, Index index) {
        return entities.keys(tenant, index);
    }

    @Override
    public Optional<SubscriptionKeeper> subscriptionKeeper() {
        return Optional.of(keepers);
    }

    @Override
    public Optional<RegistrationKeeper> registrationKeeper() {
        return Optional.of(keepers);
    }

    @Override
    public Optional<ContextKeeper> contextKeeper() {
        return Optional.of(keepers);
    }

    @Override
    public Optional<TemporalStore> temporal() {
        return entities.temporal();
    }

    /**
     * {@code cor_db_ready} (1 while the database can be reached, as {@code /health/ready} reads it),
     * {@code cor_db_connections} (open, every loop's and the helper threads' together) and
     * {@code cor_db_unavailable_total} (units of work answered 503: the database unreachable or a
     * statement past its deadline).
     */
    @Override
    public Optional<io.micrometer.core.instrument.binder.MeterBinder> meters() {
        return Optional.of(registry -> {
            io.micrometer.core.instrument.Gauge.builder("cor.db.ready", follower, f -> f.ready() ? 1 : 0)
                    .description("1 while the database can be reached").register(registry);
            io.micrometer.core.instrument.Gauge.builder("cor.db.connections", db, PgDatabase::openConnections)
                    .description("database connections open").register(registry);
            io.micrometer.core.instrument.FunctionCounter.builder("cor.db.unavailable", PgEntityStore.UNAVAILABLE,
                    java.util.concurrent.atomic.LongAdder::sum)
                    .description("units of work answered 503: the database unreachable, or a statement past its deadline")
                    .register(registry);
        });
    }

    /** Stops following, and closes every connection (each loop's on its loop while it runs). */
    @Override
    public void close() {
        follower.close();
        db.close();
    }

    @Override
    public String toString() {
        return "PostgreSQL " + where;
    }

    /** The database, for this package's tests. */
    PgDatabase database() {
        return db;
    }

}
