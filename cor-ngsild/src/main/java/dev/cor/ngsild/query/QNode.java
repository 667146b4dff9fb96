package dev.cor.ngsild.query;

import java.util.Set;
import java.util.function.Function;

import dev.cor.ngsild.model.Entity;

/** A node of a parsed q expression: an and, an or, a negated existence, a term. Immutable. */
sealed interface QNode permits QNode.And, QNode.Or, QNode.Absent, QTerm {

    /**
     * @param linked the entity of an id (a relationship's object), or {@code null}: for attr{path} terms
     * @param budget what the patterns may read (TooComplexQuery past it)
     */
    boolean test(Entity e, Function<String, Entity> linked, MatchBudget budget);

    /** Adds the attributes an entity must have to match. */
    void required(Set<String> out);

    record And(QNode[] all) implements QNode {
        @Override
        public boolean test(Entity e, Function<String, Entity> linked, MatchBudget budget) {
            for (QNode n : all) {
                if (!n.test(e, linked, budget)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public void required(Set<String> out) {
            for (QNode n : all) {
                n.required(out);
            }
        }
    }

    record Or(QNode[] any) implements QNode {
        @Override
        public boolean test(Entity e, Function<String, Entity> linked, MatchBudget budget) {
            for (QNode n : any) {
                if (n.test(e, linked, budget)) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void required(Set<String> out) {
            // an or requires nothing in particular of an entity
        }
    }

    /** {@code !attr}: the entity lacks the target element (Orion-LD's and the test suite's extension). */
    record Absent(QPath path) implements QNode {
        @Override
        public boolean test(Entity e, Function<String, Entity> linked, MatchBudget budget) {
            return !path.exists(e, linked);
        }

        @Override
        public void required(Set<String> out) {
        }
    }
}
