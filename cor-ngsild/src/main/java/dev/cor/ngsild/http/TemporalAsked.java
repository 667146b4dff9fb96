package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.model.TemporalInstance;
import dev.cor.ngsild.model.TemporalRenderer;
import dev.cor.ngsild.model.TemporalRenderer.Form;
import dev.cor.ngsild.model.TimeProperty;
import dev.cor.ngsild.query.TemporalAggregation;
import dev.cor.ngsild.store.InstanceQuery;

/**
 * What a temporal read asks to see of each entity, read once from its parameters (§ 4.11,
 * § 6.18-6.22): the window of instances, the datasetIds, the form and the system times, the
 * entity representation's projection (attrs, pick, omit, lang), and the aggregation. Immutable;
 * made by the thread that runs the request.
 *
 * @param window      the instances' window: the time compared, its bounds, lastN
 * @param datasetIds  the datasetIds asked for ({@code @none}: the default instances), or {@code null}: all
 * @param options     how the evolutions are rendered
 * @param projection  the entity representation's projection
 * @param aggregation the aggregation asked for, or {@code null}
 */
record TemporalAsked(InstanceQuery window, Set<String> datasetIds, TemporalRenderer.Options options,
        Representation projection, TemporalAggregation aggregation) {


    /**
     * The temporal parameters (§ 4.11, § 6.18-6.22): timerel with timeAt (and endTimeAt for
     * between), timeproperty, lastN, datasetId, the representation (options and format, with
     * temporalValues and aggregatedValues) and its projection (attrs, pick, omit, lang).
     */
    static TemporalAsked of(Exchange x, QueryParams p, EntityParser parser) {
        String timerel = p.get("timerel");
        TimeProperty property = TimeProperty.OBSERVED_AT;
        if (p.has("timeproperty")) {
            property = TimeProperty.of(p.get("timeproperty"));
            if (property == null) {
                throw NgsiLdException.badData("timeproperty is observedAt, createdAt, modifiedAt or deletedAt, not '"
                        + p.get("timeproperty") + "'");
            }
        }
        long from = Long.MIN_VALUE;
        long to = Long.MAX_VALUE;
        long timeAt = TemporalInstance.NO_TIME;
        long endTimeAt = TemporalInstance.NO_TIME;
        if (timerel != null) {
            timeAt = dateTime(p, "timeAt", true);
            switch (timerel) {
                case "before" -> to = timeAt;
                case "after" -> from = timeAt;
                case "between" -> {
                    endTimeAt = dateTime(p, "endTimeAt", true);
                    if (endTimeAt <= timeAt) {
                        throw NgsiLdException.badData("endTimeAt " + p.get("endTimeAt") + " is not after timeAt " + p.get("timeAt"));
                    }
                    from = timeAt;
                    to = endTimeAt;
                }
                default -> throw NgsiLdException.badData("timerel is before, after or between, not '" + timerel + "'");
            }
            if (!timerel.equals("between") && p.has("endTimeAt")) {
                dateTime(p, "endTimeAt", true); // checked, and ignored: only between reads it
            }
        } else if (p.has("timeAt") || p.has("endTimeAt")) {
            throw NgsiLdException.badData("timeAt and endTimeAt need a timerel (before, after or between)");
        }
        int lastN = 0;
        if (p.has("lastN")) {
            lastN = p.integer("lastN", 0);
            if (lastN == 0) {
                throw NgsiLdException.badData("lastN is a positive integer, not 0");
            }
        }
        Set<String> datasetIds = null;
        if (p.has("datasetId")) {
            datasetIds = new java.util.HashSet<>();
            for (String d : p.list("datasetId")) {
                if (!d.equals(InstanceQuery.DEFAULT_DATASET) && !Syntax.isUri(d)) {
                    throw NgsiLdException.badData("datasetId '" + d + "' is neither a URI nor @none");
                }
                datasetIds.add(d);
            }
        }
        // the temporal forms, then the entity representation's own options for the rest
        Form form = named(p);
        boolean sysAttrs = false;
        List<String> rest = new ArrayList<>();
        for (String o : p.list("options")) {
            if (form(o) == null) {
                sysAttrs |= o.equals("sysAttrs");
                rest.add(o);
            }
        }
        if (form == null) {
            form = Form.NORMALIZED;
        }
        QueryParams projection = p.without("format").with("options", String.join(",", rest));
        if (rest.isEmpty()) {
            projection = projection.without("options");
        }
        Representation rep = Representation.of(projection, parser);
        if (!rep.linked.isEmpty()) {
            // 5.7.3.4: a temporal read has no linked entity retrieval (TP 5731_01)
            throw NgsiLdException.badData("a braced pick or omit projects linked entities, which a temporal read does not retrieve");
        }
        TemporalAggregation aggregation = null;
        if (form == Form.AGGREGATED) {
            if (!p.has("aggrMethods")) {
                throw NgsiLdException.badData("the aggregated temporal representation needs aggrMethods");
            }
            aggregation = TemporalAggregation.parse(p.get("aggrMethods"), p.get("aggrPeriodDuration"));
        } else if (p.has("aggrMethods") || p.has("aggrPeriodDuration")) {
            TemporalAggregation.parse(p.has("aggrMethods") ? p.get("aggrMethods") : "totalCount", p.get("aggrPeriodDuration"));
        }
        TemporalRenderer.Options options = new TemporalRenderer.Options(form, sysAttrs, property, rep.options.showId(),
                rep.options.showType(), rep.options.showScope(), rep.options.lang());
        return new TemporalAsked(new InstanceQuery(property, from, to, null, lastN), datasetIds, options, rep, aggregation);
    }

    /**
     * The temporal representation {@code format} or {@code options} names ({@code format} when
     * both do), or {@code null}: none, the normalized one by default.
     */
    static Form named(QueryParams p) {
        Form form = null;
        for (String o : p.list("options")) {
            Form f = form(o);
            if (f != null && form != null && form != f) {
                throw NgsiLdException.invalid("options asks for two representations at once: " + p.get("options"));
            }
            form = f != null ? f : form;
        }
        if (p.has("format")) {
            form = form(p.get("format"));
            if (form == null) {
                throw NgsiLdException.invalid("unknown format '" + p.get("format") + "' (normalized, concise, temporalValues,"
                        + " simplified, keyValues, aggregatedValues)");
            }
        }
        return form;
    }

    /** The temporal form an option or format names, or {@code null} for the others. */
    private static Form form(String name) {
        return switch (name) {
            case "temporalValues", "simplified", "keyValues" -> Form.TEMPORAL_VALUES;
            case "aggregatedValues" -> Form.AGGREGATED;
            case "concise" -> Form.CONCISE;
            case "normalized" -> Form.NORMALIZED;
            default -> null;
        };
    }

    private static long dateTime(QueryParams p, String name, boolean required) {
        String v = p.get(name);
        if (v == null) {
            if (required) {
                throw NgsiLdException.badData(name + " is needed by timerel=" + p.get("timerel"));
            }
            return TemporalInstance.NO_TIME;
        }
        long t = Syntax.epochMillis(v);
        if (t == Syntax.NOT_A_DATE_TIME) {
            throw NgsiLdException.badData(name + " is a UTC DateTime (§ 4.6.3: YYYY-MM-DDThh:mm:ssZ), not '" + v + "'");
        }
        return t;
    }
}
