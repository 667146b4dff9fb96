package dev.cor.ngsild.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

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
        put(e, registrationId, problem);
    }

    /** A failed part of an operation that names a selection, not an entity (a purge): no entityId. */
    void selectionError(String registrationId, ObjectNode problem) {
        put(errors.addObject(), registrationId, problem);
    }

    private static void put(ObjectNode e, String registrationId, ObjectNode problem) {
        if (registrationId != null) {
            e.put("registrationId", registrationId);
        }
        e.set("error", problem);
    }

    /** Answers the 207 ({@code application/json}, no Location: the write was not wholly done). */
    void answer(NgsildApplication app, Exchange x) {
        x.request.responseHeaders().remove("Location");
        app.answerPlain(x, 207, body);
    }
}
