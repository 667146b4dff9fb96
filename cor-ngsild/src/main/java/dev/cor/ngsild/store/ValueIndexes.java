package dev.cor.ngsild.store;

import java.util.Map;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import dev.cor.ngsild.model.AttributeList;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.ValueLookup;

/**
 * The value indexes of a store: which attributes are indexed in each tenant, the heap they take
 * together against {@link ValueIndexSettings#maxBytes()}, and the one background thread that
 * builds an automatic index (one at a time). The per-tenant map ({@link Tenant}) is changed by
 * writers inside their per-id critical section ({@link Tenant#update}) and by the builder; any
 * thread reads ({@link Tenant#ids}).
 */
final class ValueIndexes implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ValueIndexes.class.getName());

    private final ValueIndexSettings settings;
    private final long maxEntries;
    private final AtomicLong entries = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong built = new AtomicLong();
    /** Created on the first automatic index: a store that never needs one starts no thread. */
    private volatile ExecutorService builder;

    ValueIndexes(ValueIndexSettings settings) {
        this.settings = settings;
        this.maxEntries = settings.maxBytes() / ValueIndex.ENTRY_BYTES;
    }

    ValueIndexSettings settings() {
        return settings;
    }

    /** Heap the indexes take, estimated. */
    long bytes() {
        return entries.get() * ValueIndex.ENTRY_BYTES;
    }

    /** Indexes dropped for the bound since the start. */
    long dropped() {
        return dropped.get();
    }

    /** Automatic indexes built since the start. */
    long built() {
        return built.get();
    }

    /** One tenant's indexes. */
    final class Tenant {
        final Map<String, ValueIndex> byAttribute = new ConcurrentHashMap<>();
        /** Attributes whose automatic index was dropped for the bound: not built again. */
        private final Set<String> refused = ConcurrentHashMap.newKeySet();

        Tenant() {
            for (String a : settings.declared()) {
                byAttribute.put(a, new ValueIndex(a, ValueIndex.State.READY));
            }
        }

        /** Moves the id's entries in every index from {@code before} to {@code after}; inside the id's critical section. */
        void update(String id, Entity before, Entity after) {
            if (byAttribute.isEmpty()) {
                return;
            }
            for (ValueIndex ix : byAttribute.values()) {
                AttributeList b = before == null ? null : before.attributes().get(ix.attribute);
                AttributeList a = after == null ? null : after.attributes().get(ix.attribute);
                if (a != b) {
                    account(ix, ix.move(id, b, a));
                }
            }
        }

        /** Adds the id's current entries to an index being built; inside the id's critical section. */
        void fill(ValueIndex ix, String id, Entity current) {
            account(ix, ix.move(id, null, current.attributes().get(ix.attribute)));
        }

        private void account(ValueIndex ix, long delta) {
            if (delta == 0 || ix.state == ValueIndex.State.DROPPED) {
                return;
            }
            if (entries.addAndGet(delta) > maxEntries && delta > 0) {
                drop(ix);
            }
        }

        private void drop(ValueIndex ix) {
            synchronized (ix) {
                if (ix.state == ValueIndex.State.DROPPED) {
                    return;
                }
                ix.state = ValueIndex.State.DROPPED;
            }
            byAttribute.remove(ix.attribute, ix);
            refused.add(ix.attribute);
            entries.addAndGet(-ix.size());
            dropped.incrementAndGet();
            // said by the next lookup: this may run inside a critical section, and a logger's handler locks
            unsaid.add(ix.attribute);
        }

        /**
         * The ids the lookup selects, in id order, each once, when a ready index holds at most
         * {@code max} entries in its ranges; else {@code null}. An attribute without an index that {@code holders}
         * entities hold, past the automatic threshold, gets one: {@code fill} then visits each of
         * its holders inside the holder's critical section, in the background.
         */
        List<String> ids(ValueLookup lookup, int max, int holders, BiConsumer<ValueIndex, Tenant> fill) {
            sayDropped();
            ValueIndex ix = byAttribute.get(lookup.attribute());
            if (ix == null) {
                if (settings.autoThreshold() > 0 && holders >= settings.autoThreshold() && !refused.contains(lookup.attribute())) {
                    build(lookup.attribute(), fill);
                }
                return null;
            }
            return ix.state == ValueIndex.State.READY ? ix.ids(lookup, max) : null;
        }

        private void build(String attribute, BiConsumer<ValueIndex, Tenant> fill) {
            ValueIndex ix = new ValueIndex(attribute, ValueIndex.State.BUILDING);
            if (byAttribute.putIfAbsent(attribute, ix) != null) {
                return;
            }
            builder().execute(() -> {
                try {
                    fill.accept(ix, this);
                    synchronized (ix) {
                        if (ix.state == ValueIndex.State.BUILDING) {
                            ix.state = ValueIndex.State.READY;
                            built.incrementAndGet();
                        }
                    }
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "cor-store: building the value index of " + attribute + " failed", e);
                    drop(ix);
                }
            });
        }
    }

    /** Attributes whose index was dropped and not yet logged. */
    private final Set<String> unsaid = ConcurrentHashMap.newKeySet();

    private void sayDropped() {
        if (unsaid.isEmpty()) {
            return;
        }
        for (String a : unsaid) {
            if (unsaid.remove(a)) {
                LOG.log(System.Logger.Level.WARNING, "cor-store: the value index of " + a + " would pass "
                        + settings.maxBytes() + " bytes with the others: dropped, its queries read every holder again");
            }
        }
    }

    private ExecutorService builder() {
        ExecutorService b = builder;
        if (b == null) {
            synchronized (this) {
                b = builder;
                if (b == null) {
                    // one build at a time; its thread ends when it has been idle a while
                    java.util.concurrent.ThreadPoolExecutor p = new java.util.concurrent.ThreadPoolExecutor(1, 1, 5,
                            java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                                Thread t = new Thread(r, "cor-value-index");
                                t.setDaemon(true);
                                return t;
                            });
                    p.allowCoreThreadTimeOut(true);
                    b = p;
                    builder = b;
                }
            }
        }
        return b;
    }

    @Override
    public void close() {
        ExecutorService b = builder;
        if (b != null) {
            b.shutdownNow();
        }
    }
}
