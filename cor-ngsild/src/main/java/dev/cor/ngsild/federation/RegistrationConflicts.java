package dev.cor.ngsild.federation;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

import dev.cor.ngsild.error.ErrorType;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.store.EntityStore;

/**
 * The registration modes' conflicts (ETSI GS CIM 009 § 5.9.2.4, the modes of § 4.3.6.2): an
 * exclusive or redirect registration is refused with 409 Conflict when this broker holds what it
 * would take away - an entity here with one of its attributes, or what another exclusive or
 * redirect registration covers already. Inclusive and auxiliary registrations never conflict.
 * Checked on create and on every update (§ 5.9.3.4), after the registration was read.
 * <p>
 * Stateless: static functions over immutable registrations and the entity store, called on the
 * loop of the request. {@link #conflictsWithRegistrations} is the registry's {@code admit} check
 * ({@link Registrations#add}, {@link Registrations#update}): it runs under the tenant's monitor,
 * so two exclusive registrations of one attribute made at once cannot both pass.
 */
public final class RegistrationConflicts {
    private RegistrationConflicts() {
    }

    /**
     * An exclusive registration over an entity that holds one of its attributes here, a redirect
     * one over an entity it matches: 409 Conflict - the broker would hold what it may not.
     */
    public static void conflictsWithEntities(Registration r, EntityStore store) {
        if (r.mode() != Registration.Mode.EXCLUSIVE && r.mode() != Registration.Mode.REDIRECT) {
            return;
        }
        for (Registration.Info info : r.information()) {
            Set<String> attrs = new LinkedHashSet<>(info.propertyNames());
            attrs.addAll(info.relationshipNames());
            if (info.entities().isEmpty()) {
                continue; // attributes alone: no one entity to check without a scan of the tenant
            }
            for (Registration.EntityInfo ei : info.entities()) {
                if (ei.id() != null) {
                    Entity e = store.get(r.tenant(), ei.id());
                    if (e != null && e.types().contains(ei.type()) && holdsAny(e, attrs)) {
                        throw conflict(r, "entity " + ei.id() + " is held here");
                    }
                } else {
                    String[] hit = {null};
                    store.forEach(r.tenant(), ei.type(), e -> {
                        if (hit[0] == null && ei.selectsId(e.id()) && holdsAny(e, attrs)) {
                            hit[0] = e.id();
                        }
                    });
                    if (hit[0] != null) {
                        throw conflict(r, "entity " + hit[0] + " is held here");
                    }
                }
            }
        }
    }

    private static boolean holdsAny(Entity e, Set<String> attrs) {
        if (attrs.isEmpty()) {
            return true;
        }
        for (String a : attrs) {
            if (e.attributes().containsKey(a)) {
                return true;
            }
        }
        return false;
    }

    /**
     * An exclusive registration whose entity and attributes an exclusive or redirect one covers
     * already (§ 5.9.2.4), or - the other way round - an exclusive one covering what a new redirect
     * one would: 409 Conflict. Auxiliary and inclusive registrations never conflict (§ 4.3.6.2).
     */
    public static void conflictsWithRegistrations(Registration r, Registrations.Live[] existing) {
        if (r.mode() != Registration.Mode.EXCLUSIVE && r.mode() != Registration.Mode.REDIRECT) {
            return;
        }
        for (Registrations.Live l : existing) {
            Registration o = l.definition();
            if (o.id().equals(r.id())) {
                continue;
            }
            boolean check = (r.mode() == Registration.Mode.EXCLUSIVE
                    && (o.mode() == Registration.Mode.EXCLUSIVE || o.mode() == Registration.Mode.REDIRECT))
                    || (r.mode() == Registration.Mode.REDIRECT && o.mode() == Registration.Mode.EXCLUSIVE);
            if (!check) {
                continue;
            }
            Registration exclusive = r.mode() == Registration.Mode.EXCLUSIVE ? r : o;
            Registration other = exclusive == r ? o : r;
            for (Registration.Info info : exclusive.information()) {
                Set<String> attrs = new LinkedHashSet<>(info.propertyNames());
                attrs.addAll(info.relationshipNames());
                for (Registration.EntityInfo ei : info.entities()) {
                    RegistrationLookup.Want want = new RegistrationLookup.Want(null, ei.id(), null, Set.of(ei.type()), attrs);
                    if (Coverage.matches(other, want)) {
                        throw conflict(r, "registration " + o.id() + " (" + o.mode().name().toLowerCase(Locale.ROOT)
                                + ") covers entity " + ei.id() + " already");
                    }
                }
            }
        }
    }

    private static NgsiLdException conflict(Registration r, String why) {
        return new NgsiLdException(ErrorType.CONFLICT, "a " + r.mode().name().toLowerCase(Locale.ROOT)
                + " registration cannot be made here: " + why + " (§ 5.9.2.4)");
    }
}
