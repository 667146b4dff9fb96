package dev.cor.ngsild.store;

import java.util.List;
import java.util.Set;

import dev.cor.ngsild.model.TemporalInstance;

/**
 * What a store knows of one entity's temporal evolution beside its instances: the types and
 * scopes it has had (the latest write's first; a query by type matches any of them), the
 * attributes it has history of, and its times. Immutable: each record makes a new one.
 *
 * @param id         the entity's id
 * @param types      its expanded types, every one it has had, the latest write's in order first
 * @param scopes     the scopes of its latest write that carried entity state, or none
 * @param attributes the expanded names of the attributes it has instances of
 * @param createdAt  when its first instance was recorded (epoch milliseconds)
 * @param modifiedAt when its latest was (epoch milliseconds)
 * @param deletedAt  when the entity was deleted, {@link TemporalInstance#NO_TIME} while it exists
 */
public record TemporalEntity(String id, List<String> types, List<String> scopes, Set<String> attributes, long createdAt,
        long modifiedAt, long deletedAt) {
    public TemporalEntity {
        types = List.copyOf(types);
        scopes = List.copyOf(scopes);
        attributes = Set.copyOf(attributes);
    }
}
