package dev.cor.server;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A scrape read back as the Prometheus text format 0.0.4 defines it: every sample line is
 * {@code name{labels} value} with the label values escaped, and belongs to a family whose
 * {@code # TYPE} came before it, once (a histogram's {@code _bucket}, {@code _count} and
 * {@code _sum} series, a summary's {@code _count} and {@code _sum}, belong to theirs). A scrape that breaks a rule fails the test that read it.
 */
final class PromText {
    private static final String LABEL = "[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\"";
    private static final Pattern SAMPLE = Pattern.compile(
            "([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{" + LABEL + "(?:," + LABEL + ")*\\})? (-?[0-9]+(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|NaN|[+-]Inf)");
    private static final Pattern HELP = Pattern.compile("# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) .*");
    private static final Pattern TYPE = Pattern.compile("# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)");

    private final Map<String, Double> samples = new LinkedHashMap<>();
    private final Set<String> families = new java.util.TreeSet<>();

    private PromText() {
    }

    static PromText parse(String text) {
        PromText p = new PromText();
        Set<String> typed = new HashSet<>();
        String family = null;
        String type = null;
        if (!text.endsWith("\n")) {
            throw new AssertionError("a scrape ends with a line feed:\n" + text);
        }
        for (String line : text.split("\n")) {
            Matcher m;
            if ((m = TYPE.matcher(line)).matches()) {
                if (!typed.add(m.group(1))) {
                    throw new AssertionError("family " + m.group(1) + " typed twice:\n" + text);
                }
                family = m.group(1);
                type = m.group(2);
                p.families.add(family);
            } else if (HELP.matcher(line).matches()) {
                continue;
            } else if ((m = SAMPLE.matcher(line)).matches()) {
                if (!inFamily(m.group(1), family, type)) {
                    throw new AssertionError("sample outside its family's block: " + line + "\n" + text);
                }
                String series = m.group(1) + (m.group(2) == null ? "" : m.group(2));
                if (p.samples.put(series, Double.parseDouble(m.group(3).replace("Inf", "Infinity"))) != null) {
                    throw new AssertionError("series given twice: " + series);
                }
            } else {
                throw new AssertionError("not a line of the text format: '" + line + "'\n" + text);
            }
        }
        return p;
    }

    /** Whether a sample named {@code name} belongs to {@code family} of {@code type}: its name, or a histogram's or summary's series. */
    private static boolean inFamily(String name, String family, String type) {
        if (name.equals(family)) {
            return true;
        }
        if (family == null || !name.startsWith(family)) {
            return false;
        }
        String suffix = name.substring(family.length());
        return switch (type) {
            case "histogram" -> suffix.equals("_bucket") || suffix.equals("_count") || suffix.equals("_sum");
            case "summary" -> suffix.equals("_count") || suffix.equals("_sum");
            default -> false;
        };
    }

    /** The value of a series written exactly as {@code name{label="v",...}}; fails when absent. */
    double value(String series) {
        Double v = samples.get(series);
        if (v == null) {
            throw new AssertionError("no series " + series + " in " + samples.keySet());
        }
        return v;
    }

    /** The value of a series, or 0 when the scrape has none (a counter never incremented). */
    double valueOrZero(String series) {
        return samples.getOrDefault(series, 0.0);
    }

    /** The names of the families the scrape typed, sorted. */
    Set<String> families() {
        return families;
    }

    boolean has(String series) {
        return samples.containsKey(series);
    }
}
