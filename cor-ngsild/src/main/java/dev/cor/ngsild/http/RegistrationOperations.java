package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.federation.RegistrationConflicts;
import dev.cor.ngsild.federation.Registrations;
import dev.cor.ngsild.http.NgsildApplication.Config;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Syntax;
import dev.cor.ngsild.store.RegistrationKeeper;

/**
 * The context source registration resource (ETSI GS CIM 009 § 5.9, § 5.10, § 6.8-6.9), what the
 * dispatcher calls: register, retrieve, query, update (a merge of the fragment's members, the
 * whole checked again) and delete, per tenant, and the registrations kept across a restart. Its
 * parts: {@link RegistrationReader} reads a CSourceRegistration (§ 5.2.9) into its expanded form -
 * entity types, property and relationship names and the registrant's own members as IRIs,
 * operation groups resolved (§ 4.20) - and checks every member; {@link RegistrationConflicts}
 * checks the mode's rules against what the broker holds (§ 5.9.2.4); {@link RegistrationQuery}
 * is what a query selects (§ 5.10.2); {@link RegistrationRenderer} answers compacted with the
 * request's context; {@link CsourceNotifications} tells the csourceSubscriptions of each change
 * (§ 5.11.7).
 * <p>
 * No state of its own (the registrations are the registry's, a request's are in its
 * {@link Exchange}): one per application, shared by every loop. Runs inline on the loop, or in a
 * coroutine when the request's context must be downloaded.
 */
final class RegistrationOperations {
    private final Config config;
    private final Registrations regs;
    private final RegistrationReader reader;
    private final CsourceNotifications notifications;

    /** {@code notifications}: what tells the csourceSubscriptions of each change of a registration. */
    RegistrationOperations(Config config, CsourceNotifications notifications) {
        this.config = config;
        this.reader = new RegistrationReader(config);
        this.notifications = notifications;
        // the registry when the broker has one wired in; without it the resource is not served (501)
        this.regs = config.registrations() instanceof Registrations r ? r : null;
    }

    /** Whether the broker keeps registrations (it does unless built without a registry). */
    boolean served() {
        return regs != null;
    }

    // ---------------------------------------------------------------- the operations

    void create(Exchange x) {
        ObjectNode body = object(x.body);
        DefinedMembers.registration(body);
        JsonNode id = body.get("id");
        String regId;
        if (id == null) {
            regId = "urn:ngsi-ld:ContextSourceRegistration:" + UUID.randomUUID();
        } else if (!id.isTextual() || !Syntax.isUri(id.asText())) {
            throw NgsiLdException.badData("the registration's id is a URI, not " + id);
        } else {
            regId = id.asText();
        }
        checkType(body.get("type"), true);
        ObjectNode doc = reader.expand(body, x.context, true);
        Registration r = reader.build(regId, x.tenant, doc, x.context, false);
        RegistrationConflicts.conflictsWithEntities(r, config.store());
        if (regs.add(r, existing -> RegistrationConflicts.conflictsWithRegistrations(r, existing)) == null) {
            throw new NgsiLdException(ErrorType.ALREADY_EXISTS, "registration " + regId + " exists already");
        }
        x.created("csourceRegistrations", regId);
        notifications.notifySubscribers(x, null, r);
    }

    void retrieve(Exchange x) {
        Registrations.Live l = existing(x);
        x.answer(200, x.accept, Exchange.json(RegistrationRenderer.render(l, x.context,
                x.accept == MediaType.LD_JSON, x.params.sysAttrsOption())), x.context);
    }

    void list(Exchange x) {
        Page page = Page.of(x.params, config.limits());
        RegistrationQuery query = RegistrationQuery.of(x.params, x.context, config.limits());
        boolean ld = x.accept == MediaType.LD_JSON;
        boolean sysAttrs = x.params.sysAttrsOption();
        List<Registrations.Live> hits = new ArrayList<>();
        long now = config.clock().millis();
        for (Registrations.Live l : regs.list(x.tenant)) {
            if (query.test(l.definition(), now)) {
                hits.add(l);
            }
        }
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (int i = page.offset(); i < hits.size() && out.size() < page.limit(); i++) {
            out.add(RegistrationRenderer.render(hits.get(i), x.context, ld, sysAttrs));
        }
        if (page.count()) {
            x.request.responseHeaders().set("NGSILD-Results-Count", Integer.toString(hits.size()));
        }
        x.answer(200, x.accept, Exchange.json(out), x.context);
        page.links(x, "csourceRegistrations", page.offset() + page.limit() < hits.size()); // 4.12, 6.3.10
    }

    void update(Exchange x) {
        Registrations.Live l = existing(x);
        ObjectNode fragment = object(x.body);
        if (fragment.isEmpty() || (fragment.size() == 1 && fragment.has("@context"))) {
            throw NgsiLdException.badData("the fragment is empty: nothing to update");
        }
        DefinedMembers.registration(fragment);
        Registration old = l.definition();
        JsonNode id = fragment.get("id");
        if (id != null && !id.asText().equals(old.id())) {
            throw NgsiLdException.badData("a registration's id cannot change (" + id + ")");
        }
        checkType(fragment.get("type"), false);
        ObjectNode merged = old.document().deepCopy();
        for (Map.Entry<String, JsonNode> m : reader.expand(fragment, x.context, false).properties()) {
            if (m.getValue().isNull()) {
                merged.remove(m.getKey()); // a merge: null removes the member (§ 5.5.8)
            } else {
                merged.set(m.getKey(), m.getValue());
            }
        }
        // the registration keeps the context it was made with: forwards are compacted with it
        Registration r = reader.build(old.id(), x.tenant, merged, old.context(), false);
        RegistrationConflicts.conflictsWithEntities(r, config.store());
        if (!regs.update(l, r, existing -> RegistrationConflicts.conflictsWithRegistrations(r, existing))) {
            throw NgsiLdException.notFound("no registration " + old.id());
        }
        x.noContent();
        notifications.notifySubscribers(x, old, r);
    }

    void delete(Exchange x) {
        String id = registrationId(x);
        Registrations.Live l = regs.find(x.tenant, id);
        if (l == null || !regs.remove(x.tenant, id)) {
            throw NgsiLdException.notFound("no registration " + id);
        }
        x.noContent();
        notifications.notifySubscribers(x, l.definition(), null);
    }

    // ---------------------------------------------------------------- kept across a restart

    /**
     * Puts a registration kept from before a restart in force again, its context processed from
     * what was kept (no download); an {@code expiresAt} passed meanwhile leaves it expired, not invalid.
     */
    /** Puts in force here a registration another broker made or changed, as kept ({@link #restore}'s build). */
    void follow(RegistrationKeeper.Kept k) {
        LdContext ctx = config.contexts().restore(k.context(), k.documents());
        regs.applyKept(reader.build(k.id(), k.tenant(), k.document(), ctx, true), k.createdAt(), k.modifiedAt());
    }

    /** Takes out of force here a registration another broker removed. */
    void dropFollowed(String tenant, String id) {
        regs.dropKept(tenant, id);
    }

    void restore(RegistrationKeeper.Kept k) {
        LdContext ctx = config.contexts().restore(k.context(), k.documents());
        regs.restore(reader.build(k.id(), k.tenant(), k.document(), ctx, true), k.createdAt(), k.modifiedAt());
    }

    /** Has {@code keeper} keep every registration from now on; returns what it kept from before. */
    List<RegistrationKeeper.Kept> keepWith(RegistrationKeeper keeper) {
        return regs.keepWith(keeper, this::kept);
    }

    /** What the durable store keeps of {@code r}: its document, its context and the documents behind it. */
    RegistrationKeeper.Kept kept(Registration r, long createdAt, long modifiedAt) {
        return new RegistrationKeeper.Kept(r.tenant(), r.id(), r.document(), r.context().echo(),
                config.contexts().remoteDocuments(r.context()), createdAt, modifiedAt);
    }

    private static void checkType(JsonNode type, boolean required) {
        if ((type == null && required) || (type != null && !RegistrationReader.TYPE.equals(type.asText()))) {
            throw NgsiLdException.badData("a registration's type is \"" + RegistrationReader.TYPE + "\"");
        }
    }

    private Registrations.Live existing(Exchange x) {
        String id = registrationId(x);
        Registrations.Live l = regs.find(x.tenant, id);
        if (l == null) {
            throw NgsiLdException.notFound("no registration " + id);
        }
        return l;
    }

    /** The path's registration id, a URI (BadRequestData otherwise, § 5.9.3.4, § 5.10.1.4). */
    private static String registrationId(Exchange x) {
        String id = x.route.entityId();
        if (id == null || !Syntax.isUri(id)) {
            throw NgsiLdException.badData("the registration id '" + id + "' is not a URI");
        }
        return id;
    }

    private static ObjectNode object(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw NgsiLdException.badData("a registration is a JSON object");
        }
        return (ObjectNode) body;
    }
}
