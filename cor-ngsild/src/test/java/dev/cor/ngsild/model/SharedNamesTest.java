package dev.cor.ngsild.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * {@link SharedNames} shares equal names as one instance - and stops adding names at its bound,
 * so that a client sending endless distinct names cannot grow it: past the bound a name comes
 * back as given, equal and unshared.
 */
class SharedNamesTest {
    /** A new instance of an equal string, as a parser or a decoder makes one per record. */
    private static String fresh(String s) {
        return new String(s.toCharArray());
    }

    @Test
    void equalNamesAreOneInstance() {
        SharedNames names = new SharedNames(100, 50);
        String first = names.name(fresh("https://example.org/a"));
        assertSame(first, names.name(fresh("https://example.org/a")));
        assertNull(names.name(null));
    }

    @Test
    void pastTheBoundANameIsNotSharedAndTheMapDoesNotGrow() {
        SharedNames names = new SharedNames(4, 50);
        List<String> kept = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            kept.add(names.name(fresh("name" + i)));
        }
        assertEquals(4, names.size());
        for (int i = 0; i < 10_000; i++) { // a hostile client's distinct names
            String s = fresh("hostile" + i);
            String back = names.name(s);
            assertSame(s, back, "past the bound, the name as given");
        }
        assertEquals(4, names.size(), "nothing added past the bound");
        String again = fresh("hostile7");
        assertNotSame(names.name(fresh("hostile7")), names.name(again), "an unshared name stays unshared");
        assertEquals("hostile7", names.name(again));
        for (int i = 0; i < 4; i++) {
            assertSame(kept.get(i), names.name(fresh("name" + i)), "what was shared before the bound still is");
        }
    }

    @Test
    void aNameLongerThanTheLimitIsNeverShared() {
        SharedNames names = new SharedNames(100, 10);
        String longer = "x".repeat(11);
        assertNotSame(names.name(fresh(longer)), names.name(fresh(longer)));
        assertEquals(0, names.size());
        String atLimit = "y".repeat(10);
        assertSame(names.name(fresh(atLimit)), names.name(fresh(atLimit)));
    }

    @Test
    void shortListsAreSharedWithTheirNames() {
        SharedNames names = new SharedNames(100, 50);
        List<String> a = names.names(new ArrayList<>(List.of(fresh("T1"), fresh("T2"))));
        List<String> b = names.names(List.of(fresh("T1"), fresh("T2")));
        assertSame(a, b);
        assertSame(a.get(0), names.name(fresh("T1")));
        assertEquals(List.of("T1", "T2"), a);
        List<String> many = List.of("a", "b", "c", "d", "e");
        assertNotSame(names.names(many), names.names(many), "a long list is copied, not shared");
        assertEquals(many, names.names(many));
        assertSame(List.of(), names.names(List.of()));
    }

    @Test
    void theBoundCountsListsAndGroupsToo() {
        SharedNames names = new SharedNames(2, 50);
        names.names(List.of("A")); // the name and the list
        assertEquals(2, names.size());
        List<String> l = List.of("B");
        assertEquals(l, names.names(l));
        assertEquals(2, names.size());
    }
}
