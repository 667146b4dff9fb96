package dev.cor.ngsild.http;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.Registrations;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.EntityRenderer;

/**
 * A context source registration as the broker gives it back (ETSI GS CIM 009 § 5.10.1 retrieve,
 * § 5.10.2 query, and the data of a csourceSubscription's notification, § 5.11.7): its stored
 * document compacted with a context - the entity types and attribute names of its information,
 * its Context Source Properties; the members § 5.2.9 defines as written - with what the broker
 * keeps of it (Table 5.2.9-2: status and the forwards' counters; createdAt and modifiedAt with
 * {@code options=sysAttrs}), and the context itself in application/ld+json. Stateless: static
 * functions, called from every loop.
 */
final class RegistrationRenderer {
    private RegistrationRenderer() {
    }

    /** The registration compacted with {@code ctx}, with what the broker keeps of it (Table 5.2.9-2). */
    static ObjectNode render(Registrations.Live l, LdContext ctx, boolean ldJson, boolean sysAttrs) {
        return render(l.definition(), l, ctx, ldJson, sysAttrs);
    }

    /** As above; {@code l} null: a registration that is gone (a notification of its deletion), without status. */
    static ObjectNode render(Registration r, Registrations.Live l, LdContext ctx, boolean ldJson, boolean sysAttrs) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("id", r.id());
        out.put("type", RegistrationReader.TYPE);
        for (Map.Entry<String, JsonNode> m : r.document().properties()) {
            String k = m.getKey();
            if (k.equals("information")) {
                out.set(k, compactInformation((ArrayNode) m.getValue(), ctx));
            } else if (RegistrationReader.MEMBERS.contains(k)) {
                out.set(k, m.getValue());
            } else {
                out.set(ctx.compactName(k), m.getValue());
            }
        }
        String status = l == null ? null : l.status();
        if (status != null) {
            out.put("status", status);
            out.put("timesSent", l.timesSent());
            out.put("timesFailed", l.timesFailed());
            if (l.lastSuccess() >= 0) {
                out.put("lastSuccess", EntityRenderer.time(l.lastSuccess()));
            }
            if (l.lastFailure() >= 0) {
                out.put("lastFailure", EntityRenderer.time(l.lastFailure()));
            }
        }
        if (sysAttrs && l != null) {
            out.put("createdAt", EntityRenderer.time(l.createdAt()));
            out.put("modifiedAt", EntityRenderer.time(l.modifiedAt()));
        }
        if (ldJson) {
            out.set("@context", ctx.echo());
        }
        return out;
    }

    private static ArrayNode compactInformation(ArrayNode information, LdContext ctx) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (JsonNode item : information) {
            ObjectNode info = JsonNodeFactory.instance.objectNode();
            if (item.get("entities") instanceof ArrayNode es) {
                ArrayNode entities = info.putArray("entities");
                for (JsonNode e : es) {
                    ObjectNode ei = e.deepCopy();
                    JsonNode t = e.get("type");
                    if (t.isArray()) {
                        ArrayNode types = JsonNodeFactory.instance.arrayNode();
                        t.forEach(one -> types.add(ctx.compactIri(one.asText())));
                        ei.set("type", types);
                    } else {
                        ei.put("type", ctx.compactIri(t.asText()));
                    }
                    entities.add(ei);
                }
            }
            for (String member : List.of("propertyNames", "relationshipNames")) {
                if (item.get(member) instanceof ArrayNode names) {
                    ArrayNode compact = info.putArray(member);
                    names.forEach(n -> compact.add(ctx.compactName(n.asText())));
                }
            }
            out.add(info);
        }
        return out;
    }
}
