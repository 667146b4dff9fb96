package dev.cor.ngsild.query;

import java.util.Set;

import dev.cor.ngsild.model.Entity;

/** A node of a parsed q expression: an and, an or, a negated existence, a term. Immutable. */
sealed interface QNode permits QNode.And, QNode.Or, QNode.Absent, QTerm {

    boolean test(Entity e);

    /** Adds the attributes an entity must have to match. */
    void required(Set<String> out);

    record And(QNode[] all) implements QNode {
        @Override
        public boolean test(Entity e) {
            for (QNode n : all) {
                if (!n.test(e)) {
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
        public boolean test(Entity e) {
            for (QNode n : any) {
                if (n.test(e)) {
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
        public boolean test(Entity e) {
            return !path.exists(e);
        }

        @Override
        public void required(Set<String> out) {
        }
    }
}
