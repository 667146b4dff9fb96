package dev.cor.ngsild.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import dev.cor.ngsild.conformance.Ngsi.Answer;

/**
 * Pagination and counting of Query Entities (6.3.10, 6.3.13, 5.7.2): the default page, limit and
 * offset walking the answer in a stable order, count=true, limit=0, the maximum. 25 entities of
 * a type no other test uses, half with {@code even}. ETSI: TP 019_06_01, 019_07_*.
 */
class QueryPaginationTest extends ConformanceTest {
    private static final int N = 25;
    private static String type;
    private static final List<String> ids = new ArrayList<>();

    @BeforeAll
    static void entities() {
        type = Entities.uniqueName("Page");
        ids.clear(); // a subclass runs these cases again in the same JVM (PostgresQueryPaginationTest)
        for (int i = 0; i < N; i++) {
            String id = Entities.id(type);
            ids.add(id);
            createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"n\": {\"type\": \"Property\", \"value\": %d}%s}", id, type,
                    i, i % 2 == 0 ? ", \"even\": {\"type\": \"Property\", \"value\": true}" : ""));
        }
        ids.sort(null);
    }

    private static List<String> page(Answer a) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : Checks.okJson(a, Json.CORE)) {
            out.add(e.path("id").asText());
        }
        return out;
    }

    @Test
    @DisplayName("6.3.10: without limit a query answers the default page of 20 entities")
    void defaultLimit() {
        assertEquals(20, page(api.get("/entities").query("type", type).send()).size());
    }

    @Test
    @DisplayName("6.3.10 TP 019_06_01: limit and offset walk the answer in id order, neither skipping nor repeating")
    void limitOffsetWalk() {
        List<String> all = new ArrayList<>();
        for (int offset = 0; offset < N + 5; offset += 7) {
            List<String> p = page(api.get("/entities").query("type", type).query("limit", "7")
                    .query("offset", Integer.toString(offset)).send());
            assertTrue(p.size() <= 7, p::toString);
            all.addAll(p);
        }
        assertEquals(ids, all);
    }

    @Test
    @DisplayName("6.3.10: pages of a q query are stable too (the filter applies before the page)")
    void filteredPages() {
        List<String> evens = new ArrayList<>();
        for (int offset = 0; offset < N; offset += 4) {
            evens.addAll(page(api.get("/entities").query("type", type).query("q", "even==true").query("limit", "4")
                    .query("offset", Integer.toString(offset)).send()));
        }
        assertEquals(13, evens.size(), evens::toString);
        assertEquals(evens.stream().sorted().toList(), evens);
    }

    /** The prev and next page links of an answer (its Link headers other than the context's), "-" for none. */
    private static String pageLinks(Answer a) {
        String prev = "-";
        String next = "-";
        for (String v : a.headers().allValues("Link")) {
            for (String l : v.split(",")) {
                if (l.contains("rel=\"prev\"")) {
                    prev = l.substring(l.indexOf('<') + 1, l.indexOf('>'));
                } else if (l.contains("rel=\"next\"")) {
                    next = l.substring(l.indexOf('<') + 1, l.indexOf('>'));
                }
            }
        }
        return prev + " " + next;
    }

    @Test
    @DisplayName("4.12, 6.3.10 TP 019_31_01..04, 037_11: Link rel=prev and rel=next point at the neighbour pages, absent at the edges")
    void pageLinks() {
        // The request's parameter order: type, count, limit, offset (ETSI's 037_11; 019_31, a
        // V1.9.1 extension of the fork, expects them sorted - doc/conformance.md).
        String base = "/ngsi-ld/v1/entities?type=" + type + "&count=true&limit=10&offset=";
        String query = "";
        String first = pageLinks(api.get("/entities").query("type", type).query("count", "true").query("limit", "10").send());
        assertEquals("- " + base + "10" + query, first);
        String middle = pageLinks(api.get("/entities").query("type", type).query("count", "true").query("limit", "10")
                .query("offset", "10").send());
        assertEquals(base + "0" + query + " " + base + "20" + query, middle);
        String last = pageLinks(api.get("/entities").query("type", type).query("count", "true").query("limit", "10")
                .query("offset", "20").send());
        assertEquals(base + "10" + query + " -", last);
        String filtered = pageLinks(api.get("/entities").query("type", type).query("q", "n<10").query("limit", "5")
                .query("offset", "5").send());
        assertEquals("/ngsi-ld/v1/entities?type=" + type + "&q=n%3C10&limit=5&offset=0 -", filtered,
                "without count, the walk looks one match past the page to know there is none");
    }

    @Test
    @DisplayName("4.12: a page link carries each parameter as the client sent it, a character beyond the BMP too")
    void pageLinksKeepEveryCharacter() {
        String t = Entities.uniqueName("Mark");
        for (int i = 0; i < 2; i++) {
            createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"mark\": {\"type\": \"Property\", \"value\": \"\uD83D\uDE97 a&b\"}}",
                    Entities.id(t), t));
        }
        Answer first = api.get("/entities").query("type", t).query("q", "mark==\"\uD83D\uDE97 a&b\"").query("limit", "1").send();
        List<String> one = page(first);
        assertEquals(1, one.size(), first::toString);
        String next = pageLinks(first).split(" ")[1];
        assertTrue(next.startsWith(Ngsi.PREFIX + "/entities?"), next);
        Answer second = api.get(next.substring(Ngsi.PREFIX.length())).send();
        List<String> two = page(second);
        assertEquals(1, two.size(), () -> next + " -> " + second);
        assertTrue(!two.equals(one), () -> next + " -> " + second);
    }

    @Test
    @DisplayName("6.3.13 TP 019_07_01: count=true gives the number of all matches in NGSILD-Results-Count, beyond the page")
    void countOfType() {
        Answer a = api.get("/entities").query("type", type).query("count", "true").query("limit", "3").send();
        assertEquals(3, page(a).size());
        assertEquals(Integer.toString(N), a.header("NGSILD-Results-Count"));
    }

    @Test
    @DisplayName("6.3.13 TP 019_07_02: count=true with q counts the entities q selects")
    void countWithQ() {
        Answer a = api.get("/entities").query("type", type).query("q", "n<5").query("count", "true").send();
        assertEquals(5, page(a).size());
        assertEquals("5", a.header("NGSILD-Results-Count"));
    }

    @Test
    @DisplayName("6.3.13: options=count (Orion-LD's spelling) counts as count=true does")
    void optionsCount() {
        Answer a = api.get("/entities").query("type", type).query("options", "keyValues,count").query("limit", "2").send();
        assertEquals(2, page(a).size());
        assertEquals(Integer.toString(N), a.header("NGSILD-Results-Count"));
    }

    @Test
    @DisplayName("6.3.13: limit=0 with count=true answers only the count")
    void limitZeroCount() {
        Answer a = api.get("/entities").query("type", type).query("limit", "0").query("count", "true").send();
        assertEquals(0, page(a).size());
        assertEquals(Integer.toString(N), a.header("NGSILD-Results-Count"));
    }

    @Test
    @DisplayName("6.3.10: limit=0 without count asks for nothing: 400 BadRequestData")
    void limitZeroAlone() {
        Checks.badData(api.get("/entities").query("type", type).query("limit", "0").send(), "limit");
    }

    @Test
    @DisplayName("6.3.10, table 6.3.2-1: a limit above the broker's maximum (1000) is 403 TooManyResults")
    void limitAboveMaximum() {
        Checks.problem(api.get("/entities").query("type", type).query("limit", "1001").send(), 403, "TooManyResults");
    }

    @Test
    @DisplayName("6.3.10: a negative or non-numeric limit or offset is 400 BadRequestData")
    void badNumbers() {
        Checks.badData(api.get("/entities").query("type", type).query("limit", "-1").send(), "limit");
        Checks.badData(api.get("/entities").query("type", type).query("offset", "x").send(), "offset");
    }

    @Test
    @DisplayName("5.7.2, 4.19 TP 019_01_06: scopeQ selects by scope: /a/# the scope and below, /+ one level, ; and , combine")
    void scopeQ() {
        String t = Entities.uniqueName("Scoped");
        String a = Entities.id(t);
        String b = Entities.id(t);
        String c = Entities.id(t);
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"scope\": \"/Madrid/Gardens\"}", a, t));
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"scope\": [\"/Madrid\", \"/Spain/North\"]}", b, t));
        createPlain(Json.obj("{\"id\": \"%s\", \"type\": \"%s\", \"scope\": \"/Berlin\"}", c, t));
        for (String[] kase : new String[][] {{"/Madrid/#", a + "," + b}, {"/Madrid", b}, {"/+/Gardens", a},
                {"/Madrid;/Spain/North", b}, {"/Berlin,/Madrid/Gardens", a + "," + c}, {"/#", a + "," + b + "," + c}}) {
            List<String> got = page(api.get("/entities").query("type", t).query("scopeQ", kase[0]).send());
            List<String> want = new ArrayList<>(List.of(kase[1].split(",")));
            want.sort(null);
            assertEquals(want, got, kase[0]);
        }
        Checks.badData(api.get("/entities").query("type", t).query("scopeQ", "Madrid").send(), "character 1");
    }
}
