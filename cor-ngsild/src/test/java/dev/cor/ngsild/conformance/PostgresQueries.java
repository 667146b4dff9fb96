package dev.cor.ngsild.conformance;

import java.lang.reflect.Method;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;

import dev.cor.ngsild.TestBroker;
import dev.cor.ngsild.store.EntityStore;
import dev.cor.ngsild.store.postgres.QueryPushdownStores;

/**
 * Moves a query suite onto PostgreSQL ({@code @ExtendWith} on a {@code Postgres*Test} subclass):
 * right after {@link ConformanceTest#startBroker} the class's memory broker is replaced by one
 * over a fresh database's store ({@link QueryPushdownStores}) - before the parent's own
 * {@code @BeforeAll} creates its entities - so that the subclass runs every case of its parent
 * through the query push-down (doc/storage.md, "Query push-down"). The parent's {@code @AfterAll}
 * stops the broker.
 */
final class PostgresQueries implements InvocationInterceptor {
    @Override
    public void interceptBeforeAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> call,
            ExtensionContext context) throws Throwable {
        invocation.proceed();
        if (call.getExecutable().getDeclaringClass() == ConformanceTest.class) {
            ConformanceTest.broker.close();
            EntityStore store = QueryPushdownStores.fresh();
            ConformanceTest.broker = TestBroker.start(b -> b.contextTimeoutMs(ConformanceTest.CONTEXT_TIMEOUT_MS).store(store), s -> { });
            ConformanceTest.api = new Ngsi(ConformanceTest.broker.baseUrl());
        }
    }
}
