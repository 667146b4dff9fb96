package dev.cor.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import dev.cor.base.testing.PackageLayers;
import org.junit.jupiter.api.Test;

/** cor-rest's packages depend downward only, in the order doc/architecture.md draws. */
class PackageLayeringTest {

    @Test
    void packagesUseOnlyThePackagesBelowThem() {
        var graph = PackageLayers.graph(PackageLayers.classesOf(CorRest.class), "dev.cor.rest");
        assertEquals(List.of(), PackageLayers.violations(graph,
                List.of("dev.cor.rest.tls", "dev.cor.rest", "dev.cor.rest.proto", "dev.cor.rest.client")));
    }
}
