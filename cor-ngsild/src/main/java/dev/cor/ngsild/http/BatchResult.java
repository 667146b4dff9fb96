package dev.cor.ngsild.http;

import java.util.List;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.federation.Forwarder;
import dev.cor.rest.CorRestJson;

/**
 * The BatchOperationResult (§ 5.2.16) of a 207: the ids done ({@code success}) and one
 * BatchEntityError (§ 5.2.17) per failed part ({@code errors}) - the entity's id, the
 * registration of the context source whose part it was (absent when the part was this broker's),
 * and the error as a ProblemDetails. Every 207 of that shape is built here: a batch, a write of a
 * whole entity that went to sources, a purge. One per request, touched by the thread that runs it.
 */
final class BatchResult {
    private final ObjectNode body = CorRestJson.mapper().createObjectNode();
    private final ArrayNode success = body.putArray("success");
    private final ArrayNode errors = body.putArray("errors");

    /** {@code id} was done. */
    void success(String id) {
        success.add(id);
    }

    /** An entity's failed part: {@code entityId} null when the item named none (the member is then null). */
    void entityError(String entityId, String registrationId, ObjectNode problem) {
        ObjectNode e = errors.addObject();
        if (entityId != null) {
            e.put("entityId", entityId);
        } else {
            e.putNull("entityId");
        }
        member(e, registrationId, problem);
    }

    /** A failed part of an operation that names a selection, not an entity (a purge): no entityId. */
    void selectionError(String registrationId, ObjectNode problem) {
        member(errors.addObject(), registrationId, problem);
    }

    private static void member(ObjectNode e, String registrationId, ObjectNode problem) {
        if (registrationId != null) {
            e.put("registrationId", registrationId);
        }
        e.set("error", problem);
    }

    /**
     * The answer of a write done here and at sources, some of which failed (§ 5.6.21.4's
     * "partial success"): 207, a BatchOperationResult whose {@code success} lists what was done
     * here and whose {@code errors} name each failed source's registration and its error.
     */
    static void partialSuccess(Exchange x, List<String> doneHere, List<Forwarder.Answer> failed) {
        BatchResult result = new BatchResult();
        doneHere.forEach(result::success);
        for (Forwarder.Answer a : failed) {
            result.selectionError(a.registration().id(), sourceProblem(a)); // a purge names a selection, not an entity
        }
        result.answer(x);
    }

    /**
     * A source's failed part as a ProblemDetails: the error it answered (its status - a 404, a 409,
     * ... - and its ProblemDetails type when it gave one; the suite's D001_03_03 reads the 409), or,
     * with no answer or an unusable one, 504/502.
     */
    static ObjectNode sourceProblem(Forwarder.Answer a) {
        int status = a.status() >= 400 && a.status() <= 599 ? a.status()
                : a.warning() == null ? a.status() : a.warning().startsWith("199") ? 504 : 502;
        ErrorType type = ErrorType.ofSource(a.status() == status ? a.body() : null, status);
        ObjectNode p = CorRestJson.mapper().createObjectNode();
        p.put("type", type.uri());
        p.put("title", type.title());
        p.put("status", status);
        p.put("detail", a.warning() != null ? a.warning() : "the context source (registration " + a.registration().id()
                + ") answered " + status);
        return p;
    }

    /** Answers the 207 ({@code application/json}, no Location: the write was not wholly done). */
    void answer(Exchange x) {
        x.request.responseHeaders().remove("Location");
        x.answerPlain(207, body);
    }
}
