package dev.cor.base;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * Whether this JVM can run coroutines, and the flags it needs for them.
 * <p>
 * Coroutines stand on {@code jdk.internal.vm.Continuation}, which {@code java.base} exports
 * only on request ({@code --add-exports java.base/jdk.internal.vm=ALL-UNNAMED}). Without the
 * flag the runtime says so once, in one line naming it, and runs with coroutines off: every
 * {@link CorCo#start} is refused and a server takes its worker hop instead. Nothing else breaks.
 */
public final class CorCoSupport {
    private static final System.Logger LOG = System.getLogger(CorCoSupport.class.getName());
    private static final String FLAGS = readFlags();
    private static final boolean AVAILABLE = probe();

    private CorCoSupport() {
    }

    /** Whether coroutines can run in this JVM. */
    public static boolean available() {
        return AVAILABLE;
    }

    /** Every JVM flag the runtime needs, as one command-line fragment (from the build's single list). */
    public static String requiredJvmFlags() {
        return FLAGS;
    }

    private static boolean probe() {
        Module base = Object.class.getModule();
        if (!base.isExported("jdk.internal.vm", CorCoSupport.class.getModule())) {
            LOG.log(System.Logger.Level.WARNING,
                    "cor: coroutines off - java.base does not export jdk.internal.vm to cor; start the JVM with "
                            + FLAGS + " (every request that can wait takes the worker hop)");
            return false;
        }
        try {
            new CoContinuation(null, () -> { }).run();
            return true;
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.WARNING,
                    "cor: coroutines off - jdk.internal.vm.Continuation does not run here: " + t);
            return false;
        }
    }

    private static String readFlags() {
        try (InputStream in = CorCoSupport.class.getResourceAsStream("jvm-flags.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("flags", "--add-exports=java.base/jdk.internal.vm=ALL-UNNAMED");
        } catch (IOException e) {
            return "--add-exports=java.base/jdk.internal.vm=ALL-UNNAMED";
        }
    }
}
