package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.ContextRef;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.model.EntityEditor;
import dev.cor.ngsild.model.EntityInput;
import dev.cor.ngsild.model.EntityParser;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.store.EntityWrite;
import dev.cor.rest.CorRestJson;

/**
 * The batch operations (ETSI GS CIM 009 § 5.6.7-5.6.10, 5.6.20): create, upsert, update, delete
 * and merge of an array of entities. Each entity is one atomic write of its own (the batch is
 * atomic per entity, not as a whole); each entity's outcome is reported - 201/204 when all
 * succeed, 207 with a BatchOperationResult ({@code success} ids, {@code errors} of
 * {@code {entityId, error: ProblemDetails}}) otherwise. In {@code application/ld+json} each
 * entity names its own {@code @context}.
 */
final class BatchOperations {
    private final Config config;
    private final DistributedBatches distributed;

    BatchOperations(Config config, DistributedBatches distributed) {
        this.config = config;
        this.distributed = distributed;
    }

    /** One entity's outcome; {@code registrationId}: the source whose part failed (null: this broker's). */
    private record Outcome(String id, boolean created, NgsiLdException error, String registrationId) {
        Outcome(String id, boolean created, NgsiLdException error) {
            this(id, created, error, null);
        }
    }

    void run(Exchange x) {
        JsonNode body = x.body;
        if (!body.isArray()) {
            throw NgsiLdException.badData("the body of a batch operation is a JSON array");
        }
        if (body.isEmpty()) {
            throw NgsiLdException.badData("the batch is empty");
        }
        if (body.size() > config.limits().maxBatch()) {
            throw NgsiLdException.badData("more than " + config.limits().maxBatch() + " entities in one batch");
        }
        for (JsonNode item : body) {
            if (item.isNull()) {
                throw NgsiLdException.badData("a batch holds no null item (5.5.4): nothing of it was done");
            }
        }
        Operation op = x.operation();
        Set<String> options = EntityOperations.options(x);
        for (String o : options) {
            boolean known = switch (op) {
                case BATCH_UPSERT -> o.equals("replace") || o.equals("update");
                case BATCH_UPDATE -> o.equals("noOverwrite");
                default -> false;
            };
            if (!known) {
                throw NgsiLdException.invalid("unknown option '" + o + "' for " + op.metricName());
            }
        }
        if (options.contains("replace") && options.contains("update")) {
            throw NgsiLdException.invalid("options replace and update exclude each other");
        }
        // registered entities: the sources take their parts first (§ 5.6.7.4 ff.), this broker does the rest
        DistributedBatches.BatchPlan plan = x.forwards != null && distributed != null
                ? distributed.batch(x, body, item -> context(x, item)) : null;
        List<Outcome> outcomes = new ArrayList<>(body.size());
        long now = config.clock().millis();
        for (int i = 0; i < body.size(); i++) {
            JsonNode item = body.get(i);
            String id = item.isTextual() ? item.asText() : item.path("id").isTextual() ? item.get("id").asText() : null;
            JsonNode here = plan == null ? item : plan.local().get(i);
            boolean remote = plan != null && plan.done().contains(id);
            Outcome o;
            if (here == null) {
                // only sources hold it: created when it is a create, or when a source said it created it
                o = new Outcome(id, op == Operation.BATCH_CREATE || (op == Operation.BATCH_UPSERT && plan.created().contains(id)), null);
            } else {
                try {
                    o = op == Operation.BATCH_DELETE ? delete(x, here) : write(x, op, options, here, now);
                } catch (NgsiLdException e) {
                    // an entity only the sources held is no error here once they took the write
                    o = remote && e.type() == ErrorType.RESOURCE_NOT_FOUND ? new Outcome(id, false, null) : new Outcome(id, false, e);
                }
            }
            DistributedBatches.SourceFailure failed = plan == null || id == null ? null : plan.failed().get(id);
            outcomes.add(failed != null ? new Outcome(id, false, failed.error(), failed.registrationId()) : o);
        }
        answer(x, op, outcomes);
    }

    private Outcome delete(Exchange x, JsonNode item) {
        if (!item.isTextual() || !Syntax.isUri(item.asText())) {
            throw NgsiLdException.badData("a batch delete lists entity ids (URIs), not " + item);
        }
        String id = item.asText();
        x.write(id, current -> {
            if (current == null) {
                throw NgsiLdException.notFound("no entity " + id);
            }
            return null;
        });
        return new Outcome(id, false, null);
    }

    private Outcome write(Exchange x, Operation op, Set<String> options, JsonNode item, long now) {
        if (!item.isObject()) {
            throw NgsiLdException.badData("a batch lists entities (JSON objects), not " + item);
        }
        LdContext ctx = context(x, item);
        EntityInput in = new EntityParser(ctx, config.limits()).entity(item,
                op == Operation.BATCH_CREATE || op == Operation.BATCH_UPSERT,
                op == Operation.BATCH_MERGE ? EntityParser.Mode.MERGE : EntityParser.Mode.WHOLE);
        if (in.id() == null) {
            throw NgsiLdException.badData("an entity of the batch has no id");
        }
        if (op == Operation.BATCH_UPDATE || op == Operation.BATCH_MERGE) {
            EntityOperations.somethingToWrite(in); // a fragment; create and upsert take whole entities, a type at least
        }
        List<EntityEditor.NotUpdated>[] kept = none();
        EntityWrite w = x.write(in.id(), current -> switch (op) {
            case BATCH_CREATE -> {
                if (current != null) {
                    throw new NgsiLdException(ErrorType.ALREADY_EXISTS, "entity " + in.id() + " exists already");
                }
                yield EntityEditor.create(in, now);
            }
            case BATCH_UPSERT -> {
                if (current == null) {
                    yield EntityEditor.create(in, now);
                }
                yield options.contains("update") ? EntityEditor.append(current, in, false, now).entity()
                        : EntityEditor.replace(current, in, now);
            }
            case BATCH_UPDATE -> {
                EntityEditor.Result r = EntityEditor.append(existing(current, in.id()), in, options.contains("noOverwrite"), now);
                kept[0] = r.notUpdated();
                yield r.entity();
            }
            case BATCH_MERGE -> EntityEditor.merge(existing(current, in.id()), in, now);
            default -> throw new IllegalStateException(op.toString());
        });
        if (!kept[0].isEmpty()) {
            // the entity was written, but noOverwrite kept some of its attributes: reported, not hidden
            StringBuilder names = new StringBuilder();
            for (EntityEditor.NotUpdated n : kept[0]) {
                names.append(names.isEmpty() ? "" : ", ").append(ctx.compactName(n.attributeIri())); // as the client named them
            }
            return new Outcome(in.id(), false, NgsiLdException.badData("attributes kept as they were (noOverwrite): " + names));
        }
        return new Outcome(in.id(), w.created(), null);
    }

    private static Entity existing(Entity current, String id) {
        if (current == null) {
            throw NgsiLdException.notFound("no entity " + id);
        }
        return current;
    }

    /** The context one entity of the batch is read with: the request's, or in ld+json its own. */
    private LdContext context(Exchange x, JsonNode item) {
        if (x.context != null) {
            if (item.has("@context")) {
                throw NgsiLdException.badData("an entity of an application/json batch may not carry @context (use a"
                        + " Link header, or send application/ld+json)");
            }
            return x.context;
        }
        JsonNode c = item.get("@context");
        if (c == null || c.isNull()) {
            throw NgsiLdException.badData("an entity of an application/ld+json batch carries its @context, and this"
                    + " one has none");
        }
        return config.contexts().resolve(ContextRef.body(c), config.contextTimeoutMs());
    }

    @SuppressWarnings("unchecked")
    private static List<EntityEditor.NotUpdated>[] none() {
        return new List[] {List.of()};
    }

    private void answer(Exchange x, Operation op, List<Outcome> outcomes) {
        boolean allOk = true;
        boolean anyCreated = false;
        for (Outcome o : outcomes) {
            allOk &= o.error() == null;
            anyCreated |= o.created();
        }
        if (allOk) {
            if (op == Operation.BATCH_CREATE || (op == Operation.BATCH_UPSERT && anyCreated)) {
                ArrayNode ids = CorRestJson.mapper().createArrayNode();
                for (Outcome o : outcomes) {
                    if (op == Operation.BATCH_CREATE || o.created()) {
                        ids.add(o.id());
                    }
                }
                x.answerPlain(201, ids);
            } else {
                x.noContent();
            }
            return;
        }
        BatchResult result = new BatchResult();
        for (Outcome o : outcomes) {
            if (o.error() == null) {
                result.success(o.id());
            } else {
                result.entityError(o.id(), o.registrationId(), Exchange.problem(o.error()));
            }
        }
        result.answer(x);
    }
}
