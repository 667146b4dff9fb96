package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.GeoQuery;
import dev.cor.ngsild.query.MatchBudget;
import dev.cor.ngsild.query.QueryExpression;
import dev.cor.ngsild.query.ScopeQuery;
import dev.cor.ngsild.query.ValueLookup;
import dev.cor.ngsild.store.EntityStore.Index;
import dev.cor.ngsild.store.EntityStore;
import org.locationtech.jts.geom.Envelope;

/**
 * One Query Entities request's selection (ETSI GS CIM 009 § 5.7.2, 5.2.23) - entity selectors
 * (ids, an id pattern, a type selection; any of them may match), attributes, q, a geo-query and
 * a scope query, all of which must hold - and the plan that runs it: it starts from the
 * smallest index that bounds the answer (ids, a type, an attribute, the spatial grid, or every
 * entity), walks candidates in id order and stops once the page is full unless a count is
 * asked, so that the cost follows the answer rather than the store. One per request, used by the
 * thread running it: its patterns share the request's {@link MatchBudget}, so that a query over
 * many entities, each match under the bound of one match, still ends with TooComplexQuery once
 * the request's matches have taken {@link MatchBudget#REQUEST_STEPS} steps together.
 */
final class EntityQuery {
    /** One EntitySelector: {@code null} members select anything. */
    record Selector(Set<String> ids, BoundedPattern idPattern, TypeSelection types) {
        boolean test(Entity e, MatchBudget budget) {
            return (ids == null || ids.contains(e.id()))
                    && (types == null || types.matches(e.types()))
                    && (idPattern == null || idPattern.find(e.id(), budget));
        }
    }

    /**
     * The page asked for, and - when counted - how many entities match in all; {@code more}: some
     * match lies beyond the page (a next page exists).
     */
    record Page(List<Entity> entities, int count, boolean more) {
    }

    private final List<Selector> selectors;
    private final List<String> attrs;
    private final QueryExpression q;
    private final GeoQuery geo;
    private final ScopeQuery scope;
    /** The entity of an id in the tenant queried (for q's terms on linked entities); set by {@link #run}. */
    private java.util.function.Function<String, Entity> linked = id -> null;
    /** orderBy (V1.9.1 § 4.23), or {@code null}: id order. */
    private final java.util.Comparator<Entity> order;
    /** What the request's patterns may still read (its idPatterns and q patterns, every entity together). */
    private final MatchBudget budget;
    /** Below this many candidates a plan is not worth asking a value index for. */
    private static final int FEW = 64;
    /** The last run's plan: what it read, what it selected, the value index it took. */
    private int read;
    private int matchedLast;
    private String indexed;

    EntityQuery(List<Selector> selectors, List<String> attrs, QueryExpression q, GeoQuery geo, ScopeQuery scope) {
        this(selectors, attrs, q, geo, scope, null);
    }

    EntityQuery(List<Selector> selectors, List<String> attrs, QueryExpression q, GeoQuery geo, ScopeQuery scope,
            java.util.Comparator<Entity> order) {
        this(selectors, attrs, q, geo, scope, order, MatchBudget.request());
    }

    private EntityQuery(List<Selector> selectors, List<String> attrs, QueryExpression q, GeoQuery geo, ScopeQuery scope,
            java.util.Comparator<Entity> order, MatchBudget budget) {
        this.budget = budget;
        this.selectors = selectors;
        this.attrs = attrs;
        this.q = q;
        this.geo = geo;
        this.scope = scope;
        this.order = order;
    }

    @Override
    public String toString() {
        return "EntityQuery[selectors=" + selectors + " attrs=" + attrs + " q=" + q + " geo=" + geo + " scope=" + scope + "]";
    }

    /** Whether {@code e} is selected: the plain filter, the reference every plan must agree with. */
    boolean test(Entity e) {
        if (!selectors.isEmpty()) {
            boolean any = false;
            for (Selector s : selectors) {
                if (s.test(e, budget)) {
                    any = true;
                    break;
                }
            }
            if (!any) {
                return false;
            }
        }
        if (!attrs.isEmpty()) {
            boolean any = false;
            for (String a : attrs) {
                if (e.attributes().containsKey(a)) {
                    any = true;
                    break;
                }
            }
            if (!any) {
                return false;
            }
        }
        return (scope == null || scope.test(e)) && (q == null || q.test(e, linked, budget)) && (geo == null || geo.test(e));
    }

    /** Runs the query on the tenant: the entities from {@code offset}, at most {@code limit}, in id order. */
    Page run(EntityStore store, String tenant, int offset, int limit, boolean count) {
        linked = id -> store.get(tenant, id);
        read = 0;
        matchedLast = 0;
        indexed = null;
        if (order != null) {
            // an order other than the ids' needs every match before the first page
            EntityQuery unordered = new EntityQuery(selectors, attrs, q, geo, scope, null, budget);
            List<Entity> all = unordered.run(store, tenant, 0, Integer.MAX_VALUE, true).entities();
            read = unordered.read;
            matchedLast = unordered.matchedLast;
            indexed = unordered.indexed;
            List<Entity> sorted = new ArrayList<>(all);
            sorted.sort(order);
            int from = Math.min(offset, sorted.size());
            int to = (int) Math.min((long) offset + limit, sorted.size());
            return new Page(sorted.subList(from, to), sorted.size(), (long) offset + limit < sorted.size());
        }
        Collector c = new Collector(offset, limit, count);
        // the cheapest source of candidates that every match comes from
        long best = store.size(tenant, Index.ALL, null);
        Runnable plan = () -> store.scan(tenant, Index.ALL, null, c);
        Set<String> ids = selectorIds();
        if (ids != null && ids.size() <= best) {
            best = ids.size();
            plan = () -> visitIds(store, tenant, ids, c);
        }
        Set<String> types = selectorTypes();
        if (types != null) {
            long n = 0;
            for (String t : types) {
                n += store.size(tenant, Index.TYPE, t);
            }
            if (n < best) {
                best = n;
                plan = types.size() == 1 ? scanOf(store, tenant, Index.TYPE, types.iterator().next(), c)
                        : () -> union(store, tenant, Index.TYPE, types, c);
            }
        }
        if (!attrs.isEmpty()) {
            long n = 0;
            for (String a : attrs) {
                n += store.size(tenant, Index.ATTRIBUTE, a);
            }
            if (n < best) {
                best = n;
                plan = attrs.size() == 1 ? scanOf(store, tenant, Index.ATTRIBUTE, attrs.get(0), c)
                        : () -> union(store, tenant, Index.ATTRIBUTE, attrs, c);
            }
        }
        if (q != null) {
            for (String a : q.requiredAttributes()) {
                long n = store.size(tenant, Index.ATTRIBUTE, a);
                if (n < best) {
                    best = n;
                    plan = scanOf(store, tenant, Index.ATTRIBUTE, a, c);
                }
            }
        }
        Envelope box = geo == null ? null : geo.bounds();
        if (box != null) {
            long n = store.sizeInBox(tenant, geo.geoproperty(), box.getMinX(), box.getMinY(), box.getMaxX(), box.getMaxY());
            if (n < best) {
                Collection<String> inBox = store.idsInBox(tenant, geo.geoproperty(), box.getMinX(), box.getMinY(),
                        box.getMaxX(), box.getMaxY());
                if (inBox != null) {
                    best = n;
                    plan = () -> visitIds(store, tenant, new TreeSet<>(inBox), c);
                }
            }
        }
        if (count && exactIndex(types)) {
            // the index is the whole filter: its size is the count, and the page ends the walk
            c.counting = false;
            plan.run();
            int n = store.size(tenant, Index.TYPE, types.iterator().next());
            return new Page(c.page, n, (long) offset + limit < n);
        }
        List<ValueLookup> lookups = q == null || best <= FEW ? List.of() : q.valueLookups();
        if (lookups.isEmpty()) {
            plan.run();
        } else if (count) {
            // every match must be found: the value index first, when it holds fewer candidates
            List<String> hits = valueIndexHits(store, tenant, lookups, worthReading(best, offset, limit, true), best);
            if (hits != null) {
                visitIds(store, tenant, hits, c);
            } else {
                plan.run();
            }
        } else {
            // the walk stops at the page's end: a few reads tell whether it will soon (dense
            // matches); if not, the value index takes over from where the walk paused
            c.readLimit = (int) Math.min(best, 4L * ((long) offset + limit + 1) + 16);
            plan.run();
            if (c.pausedAt != null) {
                String from = c.pausedAt;
                c.pausedAt = null;
                c.readLimit = Integer.MAX_VALUE;
                List<String> hits = valueIndexHits(store, tenant, lookups, worthReading(best, offset, limit, false), best);
                if (hits != null) {
                    int at = java.util.Collections.binarySearch(hits, from);
                    visitIds(store, tenant, hits.subList(at >= 0 ? at : -at - 1, hits.size()), c);
                } else {
                    c.skipBelow = from;
                    plan.run();
                }
            }
        }
        return new Page(c.page, c.matched, (long) c.matched > (long) offset + limit);
    }

    /**
     * The candidates of the value lookup whose index holds the fewest (at most {@code max}
     * entries, and fewer ids than {@code walk}), or {@code null}; {@link #indexed} names its attribute.
     */
    private List<String> valueIndexHits(EntityStore store, String tenant, List<ValueLookup> lookups, int max, long walk) {
        List<String> best = null;
        for (ValueLookup l : lookups) {
            List<String> hits = store.idsWithValues(tenant, l, max);
            if (hits != null && hits.size() < walk && (best == null || hits.size() < best.size())) {
                best = hits;
                indexed = l.attribute();
            }
        }
        return best;
    }

    /** How many entities the last {@link #run} read and tested. */
    int read() {
        return read;
    }

    /** How many of them it did not select: a cost that did not follow the answer. */
    int rejected() {
        return read - matchedLast;
    }

    /** The attribute whose value index gave the last run's candidates, or {@code null}: none did. */
    String indexed() {
        return indexed;
    }

    /**
     * The most index entries worth reading instead of walking {@code walk} candidates: half of
     * them when every match must be found (a count, a sort); else fewer, since the walk stops
     * at the page's end - with k of the walk's entities matching, it reads about
     * need x walk / k of them, and k index entries cost less only while k < sqrt(need x walk).
     */
    static int worthReading(long walk, int offset, int limit, boolean count) {
        long all = walk / 2;
        if (count) {
            return (int) Math.min(all, Integer.MAX_VALUE);
        }
        long need = (long) offset + limit + 1;
        return (int) Math.min(all, (long) Math.sqrt((double) need * walk));
    }

    /** Whether the selection is one type and nothing else. */
    private boolean exactIndex(Set<String> types) {
        return types != null && types.size() == 1 && selectors.size() == 1 && selectors.get(0).ids() == null
                && selectors.get(0).idPattern() == null && attrs.isEmpty() && q == null && geo == null && scope == null;
    }

    /** The ids every match is one of, or {@code null} when some selector names none. */
    private Set<String> selectorIds() {
        return union(Selector::ids);
    }

    /** The types of which every match has one, or {@code null} when some selector names none. */
    private Set<String> selectorTypes() {
        return union(s -> s.types() == null ? null : s.types().types());
    }

    /** What every selector bounds its matches to, joined; {@code null} when one does not bound them. */
    private Set<String> union(java.util.function.Function<Selector, Set<String>> bound) {
        if (selectors.isEmpty()) {
            return null;
        }
        Set<String> out = new TreeSet<>();
        for (Selector s : selectors) {
            Set<String> b = bound.apply(s);
            if (b == null) {
                return null;
            }
            out.addAll(b);
        }
        return out;
    }

    private static Runnable scanOf(EntityStore store, String tenant, Index index, String key, Collector c) {
        return () -> store.scan(tenant, index, key, c);
    }

    private static void visitIds(EntityStore store, String tenant, Collection<String> sortedIds, Collector c) {
        for (String id : sortedIds) {
            Entity e = store.get(tenant, id);
            if (e != null && !c.test(e)) {
                return;
            }
        }
    }

    /** The ids of several indexes merged in id order (each once), then visited. */
    private static void union(EntityStore store, String tenant, Index index, Collection<String> keys, Collector c) {
        TreeSet<String> ids = new TreeSet<>();
        for (String k : keys) {
            store.scan(tenant, index, k, e -> {
                ids.add(e.id());
                return true;
            });
        }
        visitIds(store, tenant, ids, c);
    }

    /** Filters candidates in id order into the page; answers {@code false} (stop) once nothing more is needed. */
    private final class Collector implements Predicate<Entity> {
        final int offset;
        final int limit;
        boolean counting;
        final List<Entity> page = new ArrayList<>();
        int matched;

        Collector(int offset, int limit, boolean counting) {
            this.offset = offset;
            this.limit = limit;
            this.counting = counting;
        }

        /** Reads past which the walk pauses ({@link #pausedAt}: the id it would have read next). */
        int readLimit = Integer.MAX_VALUE;
        String pausedAt;
        /** Ids below it were read before a pause: a resumed walk passes them by. */
        String skipBelow;

        @Override
        public boolean test(Entity e) {
            if (skipBelow != null) {
                if (e.id().compareTo(skipBelow) < 0) {
                    return true;
                }
                skipBelow = null;
            }
            if (read >= readLimit) {
                pausedAt = e.id();
                return false;
            }
            read++;
            if (!EntityQuery.this.test(e)) {
                return true;
            }
            if (matched >= offset && page.size() < limit) {
                page.add(e);
            }
            matched++;
            matchedLast = matched;
            // one match past the page says whether a next page exists
            return counting || (long) matched <= (long) offset + limit;
        }
    }
}
