package dev.cor.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every flag {@link ServerOptions#USAGE} lists, also read from the environment: {@code COR_} then
 * the flag's name in upper case with a {@code _} before each capital ({@code --httpLoops}:
 * {@code COR_HTTP_LOOPS}); a flag without a value takes {@code true} or {@code false}. The
 * environment's flags go before the command line's, so the command line wins. {@code --help},
 * {@code --check-data}, {@code --import} and {@code --export} are never read from it (they do not
 * configure a running broker: a variable left set would make every start a one-shot); other
 * {@code COR_} variables (the {@code ./cor} wrapper's) are left alone. Main thread only.
 */
final class EnvironmentFlags {
    /** A flag line of the usage: its name, then a value's name in capitals or the description. */
    private static final Pattern FLAG = Pattern.compile("(?m)^ {2}--([A-Za-z][A-Za-z-]*)( [A-Z][A-Z_|]*)?\\s");

    private EnvironmentFlags() {
    }

    /** The variable that gives {@code --flag}. */
    static String variable(String flag) {
        return "COR_" + flag.replaceAll("([A-Z])", "_$1").replace('-', '_').toUpperCase(Locale.ROOT);
    }

    /** {@code args} with the flags {@code env} gives in front of them. */
    static String[] prepend(Map<String, String> env, String[] args) {
        List<String> out = new ArrayList<>();
        Matcher m = FLAG.matcher(ServerOptions.USAGE);
        while (m.find()) {
            String flag = m.group(1);
            if (flag.equals("help") || flag.equals("check-data") || DataTransfer.takes("--" + flag)) {
                continue;
            }
            String name = variable(flag);
            String v = env.get(name);
            if (v == null) {
                continue;
            }
            int from = out.size();
            if (m.group(2) != null) {
                out.add("--" + flag);
                out.add(v);
            } else if (v.equalsIgnoreCase("true")) {
                out.add("--" + flag);
            } else if (!v.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException(name + " takes true or false, not " + v);
            }
            try {
                // alone, so that a mistake names the variable, not a flag nobody typed
                ServerOptions.checkEach(out.subList(from, out.size()).toArray(String[]::new));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name + "=" + v + ": " + e.getMessage());
            }
        }
        out.addAll(List.of(args));
        return out.toArray(String[]::new);
    }
}
