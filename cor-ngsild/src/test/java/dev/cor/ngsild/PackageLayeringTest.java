package dev.cor.ngsild;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import dev.cor.base.testing.PackageLayers;
import org.junit.jupiter.api.Test;

/**
 * cor-ngsild's packages depend downward only, from the embedding API and the HTTP binding to the
 * ground, in the order doc/architecture.md draws: read from the bytecode by the JDK's jdeps, so
 * an import that points up (or closes a cycle) fails the build.
 */
class PackageLayeringTest {
    static final List<String> BOTTOM_UP = List.of(
            "dev.cor.ngsild.error",
            "dev.cor.ngsild.policy",
            "dev.cor.ngsild.ld",
            "dev.cor.ngsild.model",
            "dev.cor.ngsild.store.codec",
            "dev.cor.ngsild.query",
            "dev.cor.ngsild.store",
            "dev.cor.ngsild.metrics",
            "dev.cor.ngsild.store.durable",
            "dev.cor.ngsild.store.postgres",
            "dev.cor.ngsild.subscription",
            "dev.cor.ngsild.federation",
            "dev.cor.ngsild.http",
            "dev.cor.ngsild");

    @Test
    void packagesUseOnlyThePackagesBelowThem() {
        var graph = PackageLayers.graph(PackageLayers.classesOf(CorNgsild.class), "dev.cor.ngsild");
        assertEquals(List.of(), PackageLayers.violations(graph, BOTTOM_UP));
    }
}
