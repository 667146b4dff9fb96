package dev.cor.ngsild.http;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.federation.Registration;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Syntax;

/**
 * The context source filter (§ 4.9 applied to a registration, § 5.10.2): terms
 * {@code member==value}, {@code member!=value} or {@code member} (present), joined by
 * {@code ;} (and) or {@code |} (or), over the registration's top-level members - the ones
 * § 5.2.9 names and the registrant's own, whose names expand with the request's context.
 * Immutable; parsed per request (Query Entities' and Query Registrations' {@code csf}).
 */
record Csf(List<List<String[]>> anyOf) {
    static Csf parse(String text, LdContext ctx) {
        List<List<String[]>> any = new ArrayList<>();
        for (String alt : text.split("\\|")) {
            List<String[]> all = new ArrayList<>();
            for (String term : alt.split(";")) {
                String t = term.trim();
                int op = t.indexOf("==");
                int neg = t.indexOf("!=");
                String name;
                String cmp = null;
                String value = null;
                if (neg > 0 && (op < 0 || neg < op)) {
                    name = t.substring(0, neg);
                    cmp = "!=";
                    value = t.substring(neg + 2);
                } else if (op > 0) {
                    name = t.substring(0, op);
                    cmp = "==";
                    value = t.substring(op + 2);
                } else {
                    name = t;
                }
                name = name.trim();
                if (!Syntax.isName(name) && !Syntax.isAbsoluteIri(name)) {
                    throw NgsiLdException.badData("csf: '" + t + "' is no term (member==value, member!=value, member)");
                }
                if (value != null) {
                    value = value.trim();
                    if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
                        value = value.substring(1, value.length() - 1);
                    }
                }
                String iri = RegistrationReader.MEMBERS.contains(name) ? name : ctx.expand(name);
                all.add(new String[] {iri == null ? name : iri, cmp, value});
            }
            any.add(all);
        }
        return new Csf(any);
    }

    boolean test(Registration r) {
        for (List<String[]> all : anyOf) {
            boolean ok = true;
            for (String[] term : all) {
                JsonNode v = r.document().get(term[0]);
                boolean hit;
                if (term[1] == null) {
                    hit = v != null;
                } else {
                    boolean eq = v != null && valueEquals(v, term[2]);
                    hit = term[1].equals("==") == eq;
                }
                if (!hit) {
                    ok = false;
                    break;
                }
            }
            if (ok) {
                return true;
            }
        }
        return false;
    }

    private static boolean valueEquals(JsonNode v, String want) {
        if (v.isArray()) {
            for (Iterator<JsonNode> it = v.elements(); it.hasNext();) {
                if (valueEquals(it.next(), want)) {
                    return true;
                }
            }
            return false;
        }
        if (v.isObject() && v.has("value")) {
            return valueEquals(v.get("value"), want);
        }
        return v.isValueNode() && v.asText().equals(want);
    }
}
