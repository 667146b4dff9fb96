package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.cor.ngsild.model.AttributeKind;
import dev.cor.ngsild.model.EntityRenderer;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TemporalRenderer.Evolution;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.store.InstanceQuery;

/**
 * Temporal pagination (§ 6.3.10): how far a temporal answer's reads go ({@link Reach}), where the
 * answer is cut once it carries more instances than its bound ({@link #cut}), and the 206 with
 * its {@code Content-Range} ({@link #answer}). Stateless but for a {@link Reach}, which is one
 * request's, used by the thread that runs it.
 */
final class TemporalPage {
    private TemporalPage() {
    }

    /**
     * What the answer's bound on instances left out (206): {@code from} and {@code to} are the
     * Content-Range's ends, in the order they are written.
     */
    record Cut(long from, long to) {
    }

    /**
     * How far an answer's reads need to go, as they go: once the instances read hold the bound's
     * worth, the answer will be cut at an instant no later than the bound-th oldest of them (the
     * latest with lastN, no earlier), so the next attributes are read only up to it - an answer
     * over many entities reads the bound's worth, not every entity's window. Only for a window
     * that has bounds (an instance without the compared time is in no such window); {@code null}
     * when nothing is cut (aggregation) or the window is unbounded. One per request.
     */
    static final class Reach {
        private final int bound;
        private final boolean latestFirst;
        private final TimeProperty property;
        /** The bound's worth of times nearest the start (a max-heap; with lastN, a min-heap of the latest). */
        private final java.util.PriorityQueue<Long> nearest;
        /** Whether a narrowed read left an instance out: the answer is cut even if it holds no more than the bound. */
        boolean excluded;

        private Reach(int bound, boolean latestFirst, TimeProperty property) {
            this.bound = bound;
            this.latestFirst = latestFirst;
            this.property = property;
            java.util.Comparator<Long> order = latestFirst ? java.util.Comparator.naturalOrder() : java.util.Comparator.reverseOrder();
            this.nearest = new java.util.PriorityQueue<>(order);
        }

        static Reach of(TemporalAsked asked, int bound) {
            return asked.aggregation() != null || asked.window().unbounded() ? null
                    : new Reach(bound, asked.window().lastN() > 0, asked.window().property());
        }

        void saw(List<TemporalInstance> got) {
            for (TemporalInstance i : got) {
                long t = i.time(property);
                if (t == TemporalInstance.NO_TIME) {
                    continue;
                }
                if (nearest.size() < bound) {
                    nearest.add(t);
                } else if (latestFirst ? t > nearest.peek() : t < nearest.peek()) {
                    nearest.poll();
                    nearest.add(t);
                }
            }
        }

        /** The part of {@code w} that {@link #narrowed} leaves out, or {@code null}: none. */
        InstanceQuery beyond(InstanceQuery w) {
            long at = nearest.peek();
            if (latestFirst) {
                return at <= w.from() ? null : new InstanceQuery(w.property(), w.from(), Math.min(at, w.to()), w.datasetId(), 0);
            }
            return at + 1 >= w.to() ? null : new InstanceQuery(w.property(), Math.max(w.from(), at + 1), w.to(), w.datasetId(), 0);
        }

        /** {@code w} up to the instant the answer will be cut at, when the bound's worth has been read. */
        InstanceQuery narrowed(InstanceQuery w) {
            if (nearest.size() < bound) {
                return w;
            }
            long at = nearest.peek();
            return latestFirst ? new InstanceQuery(w.property(), Math.max(w.from(), Math.min(at, w.to())), w.to(), w.datasetId(),
                    w.lastN())
                    : new InstanceQuery(w.property(), w.from(), Math.max(w.from(), Math.min(w.to(), at + 1)), w.datasetId(), w.lastN());
        }
    }

    /**
     * Applies the answer's bound on instances (temporal pagination, § 6.3.10) to {@code out}, in
     * place: when the evolutions carry more instances than the bound, the answer is cut at one
     * instant for every attribute of every entity - the bound's worth of the oldest instances (the
     * latest with lastN), and every instance at that instant - so that the range the
     * Content-Range names is complete, and the next page starts where it ends. An attribute left
     * without instances by the cut is shown empty (its instances are past the range). {@code null}
     * when nothing was cut (200).
     */
    static Cut cut(List<Evolution> out, TemporalAsked asked, Reach reach, int bound) {
        if (asked.aggregation() != null) {
            return null;
        }
        TimeProperty p = asked.window().property();
        List<Long> times = new ArrayList<>();
        for (Evolution e : out) {
            for (List<TemporalInstance> l : e.attributes().values()) {
                for (TemporalInstance i : l) {
                    long t = i.time(p);
                    if (t != TemporalInstance.NO_TIME) {
                        times.add(t);
                    }
                }
            }
        }
        boolean excluded = reach != null && reach.excluded;
        if (times.size() <= bound && !(excluded && !times.isEmpty())) {
            return null;
        }
        boolean latestFirst = asked.window().lastN() > 0;
        times.sort(latestFirst ? java.util.Comparator.reverseOrder() : java.util.Comparator.naturalOrder());
        long at = times.get(Math.min(bound, times.size()) - 1);
        long first = latestFirst ? Long.MIN_VALUE : Long.MAX_VALUE;
        long last = latestFirst ? Long.MAX_VALUE : Long.MIN_VALUE;
        for (int k = 0; k < out.size(); k++) {
            Evolution e = out.get(k);
            Map<String, List<TemporalInstance>> kept = new LinkedHashMap<>();
            Map<String, AttributeKind> kinds = new LinkedHashMap<>(e.kinds());
            for (Map.Entry<String, List<TemporalInstance>> a : e.attributes().entrySet()) {
                List<TemporalInstance> in = new ArrayList<>();
                for (TemporalInstance i : a.getValue()) {
                    long t = i.time(p);
                    if (t == TemporalInstance.NO_TIME || (latestFirst ? t >= at : t <= at)) {
                        in.add(i);
                        if (t != TemporalInstance.NO_TIME) {
                            first = latestFirst ? Math.max(first, t) : Math.min(first, t);
                            last = latestFirst ? Math.min(last, t) : Math.max(last, t);
                        }
                    }
                }
                if (in.isEmpty() && !a.getValue().isEmpty()) {
                    kinds.put(a.getKey(), a.getValue().get(a.getValue().size() - 1).value().kind());
                }
                kept.put(a.getKey(), in);
            }
            out.set(k, new Evolution(e.id(), e.types(), e.scopes(), e.createdAt(), e.modifiedAt(), e.deletedAt(), kept,
                    e.aggregated(), kinds));
        }
        // the range starts at the window's bound on the side it is read from, when the query gave one
        long bound0 = latestFirst ? asked.window().to() : asked.window().from();
        boolean given = latestFirst ? bound0 != Long.MAX_VALUE : bound0 != Long.MIN_VALUE;
        return new Cut(given ? bound0 : first, last);
    }

    /**
     * 200, or 206 with the Content-Range of the instants shown when the answer's bound cut
     * instances off (§ 6.3.10): {@code date-time <start>-<end>/<lastN or *>}, from the oldest to
     * the latest, or with lastN from the latest to the oldest.
     */
    static void answer(Exchange x, TemporalAsked asked, Cut cut, byte[] bytes) {
        if (cut == null) {
            x.answer(200, x.accept, bytes, x.context);
            return;
        }
        x.answer(206, x.accept, bytes, x.context);
        x.request.responseHeaders().set("Content-Range", "date-time " + EntityRenderer.time(cut.from()) + "-"
                + EntityRenderer.time(cut.to()) + "/"
                + (asked.window().lastN() > 0 ? Integer.toString(asked.window().lastN()) : "*"));
    }
}
