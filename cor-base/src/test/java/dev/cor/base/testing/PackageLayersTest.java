package dev.cor.base.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.cor.base.CorCo;
import org.junit.jupiter.api.Test;

/** The layering check the modules' tests rely on finds what breaks a layering, and nothing else. */
class PackageLayersTest {

    @Test
    void aDownwardGraphHasNoViolation() {
        Map<String, Set<String>> g = Map.of("a", Set.of(), "a.b", Set.of("a"), "a.c", Set.of("a", "a.b"));
        assertEquals(List.of(), PackageLayers.violations(g, List.of("a", "a.b", "a.c")));
    }

    @Test
    void anUpwardEdgeACycleAndAnUnplacedPackageAreReported() {
        Map<String, Set<String>> g = Map.of("a", Set.of("a.b"), "a.b", Set.of("a"), "a.d", Set.of());
        List<String> v = PackageLayers.violations(g, List.of("a", "a.b"));
        assertEquals(2, v.size(), v.toString());
        assertTrue(v.stream().anyMatch(s -> s.startsWith("a -> a.b")), v.toString());
        assertTrue(v.stream().anyMatch(s -> s.startsWith("a.d is in no layer")), v.toString());
    }

    @Test
    void aPackageUsingItselfIsFineUsingTheOneAboveIsNot() {
        assertEquals(List.of(), PackageLayers.violations(Map.of("a", Set.of("a")), List.of("a")));
        List<String> v = PackageLayers.violations(Map.of("a", Set.of(), "a.b", Set.of("a.b", "a")), List.of("a.b", "a"));
        assertEquals(List.of("a.b -> a: a package may use only the packages below it"), v);
    }

    @Test
    void jdepsReadsThisModulesOwnGraph() {
        Map<String, Set<String>> g = PackageLayers.graph(PackageLayers.classesOf(CorCo.class), "dev.cor.base");
        assertEquals(Set.of("dev.cor.base"), g.keySet());
    }
}
