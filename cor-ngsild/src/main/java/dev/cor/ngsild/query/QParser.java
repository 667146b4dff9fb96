package dev.cor.ngsild.query;

import java.util.ArrayList;
import java.util.List;

import dev.cor.ngsild.error.NgsiLdException;
import dev.cor.ngsild.ld.LdContext;
import dev.cor.ngsild.model.Syntax;

/**
 * Recursive descent over q (§ 4.9), one character at a time (no regular expressions):
 * <pre>
 * or    := and ('|' and)*
 * and   := unary (';' unary)*
 * unary := '(' or ')' | '!' path | path [op operand]
 * path  := name ('.' name)* ['[' member ('.' member)* ']']
 * operand := value '..' value | value (',' value)* | pattern
 * value := '"' JSON string '"' | number | true | false | date-time | date | time | URI | word
 * word  := letter (letter | digit | '_' | '-' | '.')*
 * </pre>
 * Spaces between tokens are skipped. An unquoted value runs up to ; | ) , space or ..; it is one
 * of the forms above (4.9's ComparableValue, OtherValue and URI, and the words Orion-LD and the
 * suite write unquoted) or a 400: an operator's character where a value belongs ({@code a>>4},
 * {@code a===1}) is named, as is any character no unquoted value holds. A pattern (after
 * {@code ~=}) is a regular expression and may hold any character. An error names the character
 * (1-based) and the text.
 */
final class QParser {
    private static final int MAX_DEPTH = 32;
    private static final int MAX_TERMS = 256;

    private final String text;
    private final LdContext context;
    private final java.util.Set<String> expandValues;
    /** What the text is, for errors: {@code q}, {@code orderBy}. */
    private final String what;
    /** Whether unquoted values are taken as they were before the 4.9 refusals (a q kept from then). */
    private final boolean kept;
    private int pos;
    private int depth;
    private int terms;

    /** @param expandValues the expanded names of the attributes whose values are expanded as vocab terms */
    QParser(String text, LdContext context, java.util.Set<String> expandValues, String what) {
        this(text, context, expandValues, what, false);
    }

    /** @param kept a q the broker accepted and kept before the 4.9 refusals: its unquoted values are read as then */
    QParser(String text, LdContext context, java.util.Set<String> expandValues, String what, boolean kept) {
        this.kept = kept;
        this.what = what;
        this.text = text;
        this.context = context;
        this.expandValues = expandValues;
    }

    QNode parse() {
        if (text.length() > QueryExpression.MAX_LENGTH) {
            throw NgsiLdException.badData("q is longer than " + QueryExpression.MAX_LENGTH + " characters");
        }
        skipSpaces();
        if (pos == text.length()) {
            throw error("the query is empty");
        }
        QNode root = or();
        skipSpaces();
        if (pos < text.length()) {
            throw error(text.charAt(pos) == ')' ? "a ')' closes nothing" : "expected ';', '|' or the end, found '"
                    + text.charAt(pos) + "'");
        }
        return root;
    }

    /** The whole text as one attribute path (an orderBy term's). */
    QPath pathOnly() {
        QPath p = path();
        if (pos < text.length()) {
            throw error("unexpected '" + text.charAt(pos) + "' after the attribute path");
        }
        return p;
    }

    private QNode or() {
        return QueryExpression.or(joined('|', this::and));
    }

    private QNode and() {
        return QueryExpression.and(joined(';', this::unary));
    }

    /** One or more of {@code next} separated by {@code op}. */
    private List<QNode> joined(char op, java.util.function.Supplier<QNode> next) {
        List<QNode> nodes = QueryExpression.list();
        nodes.add(next.get());
        while (peek() == op) {
            pos++;
            nodes.add(next.get());
        }
        return nodes;
    }

    private QNode unary() {
        char c = peek();
        if (c == '(') {
            if (++depth > MAX_DEPTH) {
                throw error("parentheses nest deeper than " + MAX_DEPTH);
            }
            pos++;
            QNode inner = or();
            if (peek() != ')') {
                throw error(pos >= text.length() ? "a '(' is not closed" : "expected ')', found '" + text.charAt(pos) + "'");
            }
            pos++;
            depth--;
            return inner;
        }
        if (++terms > MAX_TERMS) {
            throw error("more than " + MAX_TERMS + " terms");
        }
        if (c == '!') {
            pos++;
            return new QNode.Absent(path());
        }
        QPath path = path();
        skipSpaces();
        QTerm.Op op = operator();
        if (op == QTerm.Op.EXISTS) {
            return new QTerm(path, op, null, false, null, false);
        }
        skipSpaces();
        if (op == QTerm.Op.MATCH || op == QTerm.Op.NO_MATCH) {
            int at = pos;
            String regex = peek() == '"' ? quoted() : bare(true);
            if (regex.isEmpty()) {
                throw error(at, "a pattern is missing");
            }
            return new QTerm(path, op, null, false, BoundedPattern.compile(regex, "q: the pattern at character " + (at + 1)),
                    false);
        }
        int at = pos;
        QValue first = value();
        if (text.startsWith("..", pos)) {
            pos += 2;
            QValue last = value();
            if (!first.sameKind(last)) {
                throw error(at, "the ends of a range are of different types: " + first + ".." + last);
            }
            if (op != QTerm.Op.EQ && op != QTerm.Op.NE) {
                throw error(at, "a range goes with == or != only");
            }
            return new QTerm(path, op, new QValue[] {first, last}, true, null, expandValues.contains(path.attribute));
        }
        List<QValue> values = new ArrayList<>(2);
        values.add(first);
        while (peek() == ',') {
            pos++;
            values.add(value());
        }
        if (values.size() > 1 && op != QTerm.Op.EQ && op != QTerm.Op.NE) {
            throw error(at, "a list of values goes with == or != only");
        }
        if (op != QTerm.Op.EQ && op != QTerm.Op.NE && first.kind == QValue.Kind.BOOLEAN) {
            throw error(at, "true and false go with == or != only");
        }
        return new QTerm(path, op, values.toArray(QValue[]::new), false, null, expandValues.contains(path.attribute));
    }

    private QTerm.Op operator() {
        if (pos >= text.length()) {
            return QTerm.Op.EXISTS;
        }
        int at = pos;
        char c = text.charAt(pos);
        char n = pos + 1 < text.length() ? text.charAt(pos + 1) : 0;
        switch (c) {
            case '=' -> {
                if (n == '=') {
                    pos += 2;
                    return QTerm.Op.EQ;
                }
                throw error(at, "'=' is not an operator: == compares");
            }
            case '!' -> {
                if (n == '=') {
                    pos += 2;
                    return QTerm.Op.NE;
                }
                if (n == '~' && text.startsWith("=", pos + 2)) {
                    pos += 3;
                    return QTerm.Op.NO_MATCH;
                }
                throw error(at, "expected != or !~=");
            }
            case '>' -> {
                pos += n == '=' ? 2 : 1;
                return n == '=' ? QTerm.Op.GE : QTerm.Op.GT;
            }
            case '<' -> {
                pos += n == '=' ? 2 : 1;
                return n == '=' ? QTerm.Op.LE : QTerm.Op.LT;
            }
            case '~' -> {
                if (n == '=') {
                    pos += 2;
                    return QTerm.Op.MATCH;
                }
                throw error(at, "expected ~=");
            }
            case ';', '|', ')' -> {
                return QTerm.Op.EXISTS;
            }
            default -> throw error(at, "expected an operator (== != > >= < <= ~= !~=), ';', '|' or ')', found '" + c + "'");
        }
    }

    private QPath path() {
        skipSpaces();
        int at = pos;
        List<String> names = new ArrayList<>(2);
        names.add(name());
        while (peek() == '.') {
            pos++;
            names.add(name());
        }
        if (names.size() == 1 && pos < text.length() && text.charAt(pos) == '{') {
            return linked(names.get(0), at);
        }
        List<String> members = new ArrayList<>(1);
        if (pos < text.length() && text.charAt(pos) == '[') {
            pos++;
            members.add(member());
            while (pos < text.length() && text.charAt(pos) == '.') {
                pos++;
                members.add(member());
            }
            if (pos >= text.length() || text.charAt(pos) != ']') {
                throw error(pos >= text.length() ? "a '[' is not closed" : "expected ']', found '" + text.charAt(pos) + "'");
            }
            pos++;
        }
        String first = names.get(0);
        QPath.Meta entityTime = names.size() == 1 && members.isEmpty() ? QPath.Meta.of(first) : QPath.Meta.NONE;
        if (entityTime != QPath.Meta.CREATED_AT && entityTime != QPath.Meta.MODIFIED_AT) {
            entityTime = QPath.Meta.NONE;
        }
        String attribute = expand(first, at);
        QPath.Meta meta = QPath.Meta.NONE;
        int subCount = names.size() - 1;
        if (subCount > 0) {
            meta = QPath.Meta.of(names.get(names.size() - 1));
            if (meta != QPath.Meta.NONE) {
                subCount--;
            }
        }
        String[] subs = new String[subCount];
        for (int i = 0; i < subCount; i++) {
            subs[i] = expand(names.get(i + 1), at);
        }
        return new QPath(attribute, entityTime, subs, meta, members.toArray(String[]::new), null);
    }

    /** {@code rel{[Type(,Type)*:]path}} (4.9 examples 13/14): the path on the entities {@code rel} names. */
    private QPath linked(String relationship, int at) {
        if (++depth > MAX_DEPTH) {
            throw error("links nest deeper than " + MAX_DEPTH);
        }
        pos++; // '{'
        java.util.Set<String> types = new java.util.HashSet<>();
        int colon = -1;
        for (int i = pos; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == ':') {
                colon = i;
                break;
            }
            if (c == '{' || c == '}' || c == '.' || c == '[') {
                break;
            }
        }
        if (colon > pos) {
            for (String t : text.substring(pos, colon).split(",", -1)) {
                if (!Syntax.isName(t)) {
                    throw error(pos, "'" + t + "' is not an entity type (a type hint before ':')");
                }
                String iri = context.expand(t);
                if (iri == null) {
                    throw error(pos, "the entity type '" + t + "' does not expand to an IRI");
                }
                types.add(iri);
            }
            pos = colon + 1;
        }
        QPath inner = path();
        if (pos >= text.length() || text.charAt(pos) != '}') {
            throw error(pos >= text.length() ? "a '{' is not closed" : "expected '}', found '" + text.charAt(pos) + "'");
        }
        pos++;
        depth--;
        return new QPath(expand(relationship, at), QPath.Meta.NONE, new String[0], QPath.Meta.NONE, new String[0],
                new QPath.Link(types, inner));
    }

    /** An attribute name: a letter, then letters, digits, '_' - or a compact IRI ({@code ex:temp}). */
    private String name() {
        int start = pos;
        while (pos < text.length()) {
            int cp = text.codePointAt(pos);
            boolean ok = pos == start ? Character.isLetter(cp)
                    : Character.isLetterOrDigit(cp) || cp == '_' || cp == ':' || cp == '-' || cp == '/' || cp == '#';
            if (!ok) {
                break;
            }
            pos += Character.charCount(cp);
        }
        if (pos == start) {
            throw error(pos >= text.length() ? "an attribute name is missing at the end"
                    : "an attribute name starts with a letter, not '" + text.charAt(pos) + "'");
        }
        return text.substring(start, pos);
    }

    /** A member of a compound value (or a language tag, or {@code *}): anything up to '.' or ']'. */
    private String member() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) != '.' && text.charAt(pos) != ']' && text.charAt(pos) != '[') {
            pos++;
        }
        if (pos == start) {
            throw error("a member name is missing inside [ ]");
        }
        return text.substring(start, pos);
    }

    private String expand(String name, int at) {
        String iri = context.expand(name);
        if (iri == null || !Syntax.isAbsoluteIri(iri)) {
            throw error(at, "the attribute name '" + name + "' does not expand to an IRI");
        }
        return iri;
    }

    private QValue value() {
        skipSpaces();
        int at = pos;
        if (peek() == '"') {
            String s = quoted();
            return QValue.text(s, vocab(s), true);
        }
        String s = bare(false);
        if (s.isEmpty()) {
            throw error(at, pos >= text.length() ? "a value is missing at the end" : "a value is missing before '"
                    + text.charAt(pos) + "'");
        }
        if (s.equals("true") || s.equals("false")) {
            return QValue.bool(s.equals("true"));
        }
        if (isNumber(s)) {
            return QValue.number(Double.parseDouble(s));
        }
        if (s.indexOf('"') >= 0) {
            throw error(at, "a quote inside an unquoted value: '" + s + "'");
        }
        // an unquoted URI (a relationship's object) or word (a vocab term), as Orion-LD and the test suite use them
        QValue v = QValue.text(s, vocab(s), false);
        if (!kept && v.temporal == QValue.Temporal.NONE && !Syntax.isUri(s) && !isWord(s)) {
            throw notAValue(s, at);
        }
        return v;
    }

    /** A letter, then letters, digits, '_', '-' or '.': a vocab term or a plain word, unquoted. */
    private static boolean isWord(String s) {
        int first = s.codePointAt(0);
        if (!Character.isLetter(first)) {
            return false;
        }
        for (int i = Character.charCount(first); i < s.length(); ) {
            int cp = s.codePointAt(i);
            if (!(Character.isLetterOrDigit(cp) || cp == '_' || cp == '-' || cp == '.')) {
                return false;
            }
            i += Character.charCount(cp);
        }
        return true;
    }

    /**
     * The 400 of an unquoted value that is none of the forms: an operator's character where a
     * value starts ({@code a>>4}, {@code a===1}, {@code a>=>4}) is named at its place; so is the
     * first character a URI cannot hold; else the value as a whole.
     */
    private NgsiLdException notAValue(String s, int at) {
        char c = s.charAt(0);
        if ("=!<>~".indexOf(c) >= 0) {
            return error(at, "'" + c + "' where a value belongs: one operator (== != > >= < <= ~= !~=) is followed by a"
                    + " value");
        }
        if (!(Character.isLetterOrDigit(c) || c == '-')) {
            return error(at, "a value does not start with '" + c + "' (a number, true, false, a date or time, a URI, a"
                    + " word, or a quoted string)");
        }
        for (int i = 0; i < s.length(); i++) {
            if ("<>{}\\^`".indexOf(s.charAt(i)) >= 0) {
                return error(at + i, "'" + s.charAt(i) + "' in an unquoted value (quote a string)");
            }
        }
        return error(at, "'" + s + "' is no value: a number, true, false, a date or time, a URI, a word, or a quoted"
                + " string");
    }

    private String vocab(String s) {
        if (!Syntax.isName(s)) {
            return s;
        }
        String iri = context.expand(s);
        return iri == null ? s : iri;
    }

    /** An unquoted value: up to ';', '|', ')', and - for a value, not a pattern - ',' or '..'. */
    private String bare(boolean pattern) {
        int start = pos;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == ';' || c == '|' || (c == ')' && !pattern) || (!pattern && (c == ',' || c == ' '))) {
                break;
            }
            if (!pattern && c == '.' && pos + 1 < text.length() && text.charAt(pos + 1) == '.') {
                break;
            }
            pos++;
        }
        return text.substring(start, pos);
    }

    /** A JSON string (RFC 8259 § 7), its escapes decoded. */
    private String quoted() {
        int open = pos;
        pos++;
        StringBuilder sb = new StringBuilder();
        while (pos < text.length()) {
            char c = text.charAt(pos++);
            if (c == '"') {
                return sb.toString();
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (pos >= text.length()) {
                break;
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"', '\\', '/' -> sb.append(e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (pos + 4 > text.length()) {
                        throw error(pos - 2, "a \\u escape needs four hex digits");
                    }
                    int cp = 0;
                    for (int i = 0; i < 4; i++) {
                        int d = Character.digit(text.charAt(pos + i), 16);
                        if (d < 0) {
                            throw error(pos - 2, "a \\u escape needs four hex digits");
                        }
                        cp = cp * 16 + d;
                    }
                    sb.append((char) cp);
                    pos += 4;
                }
                default -> throw error(pos - 2, "'\\" + e + "' is not a JSON escape");
            }
        }
        throw error(open, "a '\"' is not closed");
    }

    /** A JSON number (RFC 8259 § 6). */
    static boolean isNumber(String s) {
        int i = 0;
        int n = s.length();
        if (i < n && s.charAt(i) == '-') {
            i++;
        }
        if (i >= n) {
            return false;
        }
        if (s.charAt(i) == '0') {
            i++;
        } else if (s.charAt(i) >= '1' && s.charAt(i) <= '9') {
            while (i < n && Character.isDigit(s.charAt(i)) && s.charAt(i) < 128) {
                i++;
            }
        } else {
            return false;
        }
        if (i < n && s.charAt(i) == '.') {
            i++;
            int d = i;
            while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
            }
            if (i == d) {
                return false;
            }
        }
        if (i < n && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                i++;
            }
            int d = i;
            while (i < n && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
                i++;
            }
            if (i == d) {
                return false;
            }
        }
        return i == n;
    }

    private char peek() {
        skipSpaces();
        return pos < text.length() ? text.charAt(pos) : 0;
    }

    private void skipSpaces() {
        while (pos < text.length() && text.charAt(pos) == ' ') {
            pos++;
        }
    }

    private NgsiLdException error(String what) {
        return error(pos, what);
    }

    private NgsiLdException error(int at, String what) {
        return NgsiLdException.badData(this.what + ": " + what + " at character " + (at + 1) + " of '" + text + "'");
    }
}
