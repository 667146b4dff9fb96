package dev.cor.ngsild.federation;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;

import dev.cor.ngsild.federation.RegistrationLookup.Want;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.query.BoundedPattern;
import dev.cor.ngsild.query.MatchBudget;

/**
 * What a context source registration covers (ETSI GS CIM 009 § 4.3.6, § 5.2.8-5.2.10, § 5.12):
 * the one matcher of registrations. The lookup asks it whether a registration serves a request
 * ({@link #matches}, for {@link Registrations#matching}); the distributed operations of the HTTP
 * binding ask it, of a registration that matched, which entities and which of their attributes it
 * registers ({@link #covers}, {@link #provided}, {@link #typesOf}, {@link #narrow}) - to shape each
 * forward and to check each answer. Both read an EntityInfo by one rule ({@link #entityMatches})
 * and a RegistrationInfo's attribute names by one ({@link #registersEveryAttribute}). Pure
 * functions of immutable registrations: no state, any loop or worker.
 */
public final class Coverage {
    private Coverage() {
    }

    // ---------------------------------------------------------------- the lookup: does it serve the request

    /** Whether one of {@code r}'s RegistrationInfo covers {@code want} (§ 4.3.6, § 5.12). */
    public static boolean matches(Registration r, Want want) {
        for (Registration.Info info : r.information()) {
            if (matches(info, want)) {
                return true;
            }
        }
        return false;
    }

    static boolean matches(Registration.Info info, Want want) {
        if (!attrsMatch(info, want.attrs())) {
            return false;
        }
        return entitiesMatch(info, want.id(), want.idPattern(), want.budget(), want.types());
    }

    /** Registered attributes: none named covers every attribute; a request naming none wants any. */
    static boolean attrsMatch(Registration.Info info, Set<String> attrs) {
        if (attrs == null || attrs.isEmpty() || registersEveryAttribute(info)) {
            return true;
        }
        for (String a : attrs) {
            if (info.propertyNames().contains(a) || info.relationshipNames().contains(a)) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- the forwards: what it registers of an entity

    /**
     * The attribute names (expanded) {@code r} provides for the entity {@code id} of
     * {@code types} ({@code null} id: any its entities match), or {@code null}: every attribute.
     */
    public static Set<String> provided(Registration r, String id, Set<String> types) {
        Set<String> out = new HashSet<>();
        for (Registration.Info info : r.information()) {
            if (!infoCovers(info, id, types)) {
                continue;
            }
            if (registersEveryAttribute(info)) {
                return null;
            }
            out.addAll(info.propertyNames());
            out.addAll(info.relationshipNames());
        }
        return out;
    }

    /** Whether {@code r} registers entity {@code e} (by id, pattern and type). */
    public static boolean covers(Registration r, Entity e) {
        return covers(r, e.id(), new LinkedHashSet<>(e.types()));
    }

    /** Whether {@code r} registers the entity {@code id} of {@code types} (by id, pattern and type). */
    public static boolean covers(Registration r, String id, Set<String> types) {
        for (Registration.Info info : r.information()) {
            if (infoCovers(info, id, types)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The entity types {@code r} registers for {@code id} (any id when {@code null}): the types a
     * forward names. Not {@link #entityMatches}' id rule, and kept so: it compares an EntityInfo's
     * {@code id} only, so an EntityInfo of an idPattern (or of no id) gives its type for any id -
     * what the forwards' {@code type} parameter has always carried.
     */
    public static Set<String> typesOf(Registration r, String id) {
        Set<String> out = new LinkedHashSet<>();
        for (Registration.Info info : r.information()) {
            for (Registration.EntityInfo ei : info.entities()) {
                if (ei.type() != null && (id == null || ei.id() == null || ei.id().equals(id))) {
                    out.add(ei.type());
                }
            }
        }
        return out;
    }

    /** What to ask a source for: the attributes asked that it provides ({@code null}: all it has). */
    public static Set<String> narrow(Set<String> provided, Set<String> asked) {
        if (asked.isEmpty()) {
            return provided;
        }
        if (provided == null) {
            return asked;
        }
        Set<String> out = new LinkedHashSet<>(asked);
        out.retainAll(provided);
        return out;
    }

    /** Whether {@code info} registers the entity, its attributes aside: the lookup's rule with neither pattern nor attributes. */
    private static boolean infoCovers(Registration.Info info, String id, Set<String> types) {
        return entitiesMatch(info, id, null, null, types);
    }

    // ---------------------------------------------------------------- the rules both ask

    /** No {@code entities} in a RegistrationInfo covers any entity; otherwise one of its EntityInfo must. */
    private static boolean entitiesMatch(Registration.Info info, String id, BoundedPattern idPattern, MatchBudget budget,
            Set<String> types) {
        if (info.entities().isEmpty()) {
            return true;
        }
        for (Registration.EntityInfo e : info.entities()) {
            if (entityMatches(e, id, idPattern, budget, types)) {
                return true;
            }
        }
        return false;
    }

    /**
     * An EntityInfo against what a request names: the type must be one the request names (any,
     * when it names none); the request's id must be one the EntityInfo names
     * ({@link Registration.EntityInfo#selectsId}); the request's idPattern must be found in the
     * EntityInfo's id - and against the EntityInfo's idPattern it matches (two patterns cannot be
     * compared; the source filters, as Orion-LD forwards too). An EntityInfo always has a type
     * (§ 5.2.8; the registration's parser gives every one its own).
     *
     * @param budget what {@code idPattern} may read (null without one)
     */
    static boolean entityMatches(Registration.EntityInfo e, String id, BoundedPattern idPattern, MatchBudget budget,
            Set<String> types) {
        if (types != null && !types.isEmpty() && !types.contains(e.type())) {
            return false;
        }
        if (id != null) {
            return e.selectsId(id);
        }
        if (idPattern != null && e.id() != null) {
            return idPattern.find(e.id(), budget);
        }
        return true;
    }

    /** A RegistrationInfo that names no property and no relationship registers every attribute (§ 5.2.10). */
    static boolean registersEveryAttribute(Registration.Info info) {
        return info.propertyNames().isEmpty() && info.relationshipNames().isEmpty();
    }
}
