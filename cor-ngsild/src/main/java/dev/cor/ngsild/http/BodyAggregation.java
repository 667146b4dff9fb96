package dev.cor.ngsild.http;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.model.TemporalRenderer.Form;

/**
 * The aggregation a Query body asks for on {@code POST /temporal/entityOperations/query}, turned
 * into the GET's parameters so that {@link TemporalAsked} and
 * {@link dev.cor.ngsild.query.TemporalAggregation} judge both requests by one rule. A body asks in
 * one of two places:
 * <ul>
 * <li>its TemporalQuery: {@code temporalQ.aggrMethods} (a comma-separated string or an array of
 *     strings) and {@code temporalQ.aggrPeriodDuration} (V1.9.1 Table 5.2.21-1; the suite's
 *     021_27);</li>
 * <li>its AggregationParams: {@code aggrParams} {@code {"aggrMethods": [...], "aggrPeriodDuration"}}
 *     (V1.9.1 § 5.2.44; the suite's 5244_01).</li>
 * </ul>
 * Methods given (or an {@code aggrParams}) ask for the aggregated representation: the answer is
 * the GET's with {@code format=aggregatedValues}, unless the request's {@code format} or
 * {@code options} names another representation - that contradiction is 400 BadRequestData rather
 * than one of the two asks dropped. A duration alone asks nothing, as on GET (it is checked, and
 * used if {@code format=aggregatedValues}). Giving a member in both places, a wrong JSON type, an
 * array item that is a list itself, and the top-level {@code aggrMethods},
 * {@code aggrPeriodDuration} or {@code aggregationParams} (no member of a Query) are 400
 * BadRequestData naming the member. Stateless.
 */
final class BodyAggregation {
    /** Members a client might put at the Query's top level; they belong in temporalQ or aggrParams. */
    private static final List<String> MISPLACED = List.of("aggrMethods", "aggrPeriodDuration", "aggregationParams");

    private BodyAggregation() {
    }

    /** {@code params} with the aggregation {@code body} asks for, if any. */
    static QueryParams into(JsonNode body, QueryParams params) {
        for (String m : MISPLACED) {
            if (body.has(m)) {
                throw NgsiLdException.badData(m + " is no member of a Query: the aggregation goes in temporalQ"
                        + " (aggrMethods, aggrPeriodDuration) or in aggrParams (§ 5.2.44)");
            }
        }
        JsonNode temporalQ = body.get("temporalQ"); // an object, or absent: the caller checked
        JsonNode aggrParams = body.get("aggrParams");
        if (aggrParams != null && !aggrParams.isObject()) {
            throw NgsiLdException.badData("aggrParams is an AggregationParams (an object, § 5.2.44)");
        }
        String methods = null;
        String duration = null;
        if (temporalQ != null) {
            methods = methods(temporalQ.get("aggrMethods"), "temporalQ.aggrMethods");
            duration = duration(temporalQ.get("aggrPeriodDuration"), "temporalQ.aggrPeriodDuration");
        }
        if (aggrParams != null) {
            methods = once(methods, methods(aggrParams.get("aggrMethods"), "aggrParams.aggrMethods"), "aggrMethods");
            duration = once(duration, duration(aggrParams.get("aggrPeriodDuration"), "aggrParams.aggrPeriodDuration"),
                    "aggrPeriodDuration");
        }
        QueryParams p = params;
        if (methods != null) {
            p = p.with("aggrMethods", methods);
        }
        if (duration != null) {
            p = p.with("aggrPeriodDuration", duration);
        }
        if (methods == null && aggrParams == null) {
            return p;
        }
        Form named = TemporalAsked.named(params);
        if (named == null) {
            return p.with("format", "aggregatedValues");
        }
        if (named != Form.AGGREGATED) {
            throw NgsiLdException.badData("the body asks for the aggregated representation (aggrMethods) while "
                    + (params.has("format") ? "format" : "options") + " asks for another representation");
        }
        return p;
    }

    /** The methods of a member: a comma-separated string, or an array of strings each naming one. */
    private static String methods(JsonNode v, String member) {
        if (v == null) {
            return null;
        }
        if (v.isTextual()) {
            return v.asText();
        }
        if (!v.isArray()) {
            throw NgsiLdException.badData(member + " is a string or an array of strings");
        }
        List<String> items = EntityOperations.strings(v, member);
        for (String item : items) {
            if (item.indexOf(',') >= 0) {
                throw NgsiLdException.badData(member + ": each item of the array is one method, not a list");
            }
        }
        // empty items stay, as empty items of the list, for TemporalAggregation to reject
        return String.join(",", items);
    }

    private static String duration(JsonNode v, String member) {
        return v == null ? null : EntityOperations.textOf(v, member);
    }

    /** The one of {@code a} and {@code b} given; both given is ambiguous. */
    private static String once(String a, String b, String name) {
        if (a != null && b != null) {
            throw NgsiLdException.badData(name + " is given both in temporalQ and in aggrParams: give it once");
        }
        return a != null ? a : b;
    }
}
