package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.rest.CorRestJson;

/**
 * The outcome of a write of attributes (§ 5.6.2, 5.6.3 and their distributed forms): the
 * attributes updated and those not updated, each with its reason and, when a context source did
 * not take it, its registration (§ 5.2.19). Gathered by IRI from every part of the write - this
 * broker's and each source's - and answered from: 204 when everything was updated, else 207 with
 * an UpdateResult (§ 5.2.18) whose names are compacted with the request's context, so that they
 * are the names the client wrote (as Orion-LD answers; clients match the names they sent). An
 * attribute that some part did not update is not listed as updated. One per request, touched by
 * the thread that runs it.
 */
final class UpdateResult {
    private final Set<String> updated = new LinkedHashSet<>();
    private final List<String[]> notUpdated = new ArrayList<>();

    /** {@code iri} was updated. */
    void updated(String iri) {
        updated.add(iri);
    }

    /** {@code iri} ({@code null}: the part had no attribute) was not updated, for {@code reason}; {@code registrationId} null: here. */
    void notUpdated(String iri, String reason, String registrationId) {
        notUpdated.add(new String[] {iri, reason, registrationId});
    }

    /** Whether some attribute was not updated: the answer is a 207. */
    boolean partial() {
        return !notUpdated.isEmpty();
    }

    /** The UpdateResult (§ 5.2.18), its names compacted with {@code context}. */
    ObjectNode body(LdContext context) {
        Set<String> failed = new LinkedHashSet<>();
        for (String[] n : notUpdated) {
            failed.add(n[0]);
        }
        ObjectNode body = CorRestJson.mapper().createObjectNode();
        ArrayNode u = body.putArray("updated");
        for (String iri : updated) {
            if (!failed.contains(iri)) {
                u.add(context.compactName(iri));
            }
        }
        ArrayNode nu = body.putArray("notUpdated");
        for (String[] n : notUpdated) {
            ObjectNode d = nu.addObject();
            d.put("attributeName", n[0] == null ? "" : context.compactName(n[0]));
            d.put("reason", n[1]);
            if (n[2] != null) {
                d.put("registrationId", n[2]);
            }
        }
        return body;
    }

    /** Answers the write: 204, or 207 with the UpdateResult ({@code application/json}, no Link: it is no entity). */
    void answer(Exchange x) {
        if (!partial()) {
            x.noContent();
            return;
        }
        x.request.responseHeaders().remove("Location");
        x.answerPlain(207, body(x.context));
    }
}
