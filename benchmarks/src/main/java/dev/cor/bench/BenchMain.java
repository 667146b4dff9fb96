package dev.cor.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.cor.base.CorCoSupport;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * The entry point of {@code benchmarks.jar}: JMH's command line, with the JVM flags the runtime
 * needs (from the build's single list, {@link CorCoSupport#requiredJvmFlags()}) appended to
 * every forked JVM, so a benchmark never runs with coroutines silently off.
 * {@code memory} as the only argument runs {@link SuspendedMemory} instead; {@code corRequest ARGS}
 * runs the load generator; {@code fsyncCost DIR} times this disk's fsync ({@link FsyncCost});
 * {@code storeRecovery load|recover|memory ...} measures the durable store's recovery and the heap
 * the stores hold per entity ({@link StoreRecovery}).
 */
public final class BenchMain {
    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 1 && args[0].equals("memory")) {
            SuspendedMemory.run();
            return;
        }
        if (args.length > 0 && args[0].equals("fsyncCost")) {
            FsyncCost.run(java.util.Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 1 && args[0].equals("storeRecovery")) {
            StoreRecovery.run(java.util.Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        if (args.length > 0 && args[0].equals("corRequest")) {
            // through -jar, so the manifest's Add-Exports gives its cor:// target coroutines
            dev.cor.bench.load.CorRequest.main(java.util.Arrays.copyOfRange(args, 1, args.length));
            return;
        }
        CommandLineOptions cmd = new CommandLineOptions(args);
        if (cmd.shouldHelp() || cmd.shouldList() || cmd.shouldListWithParams() || cmd.shouldListProfilers()
                || cmd.shouldListResultFormats()) {
            org.openjdk.jmh.Main.main(args);
            return;
        }
        List<String> append = new ArrayList<>(Arrays.asList(CorCoSupport.requiredJvmFlags().trim().split("\\s+")));
        if (cmd.getJvmArgsAppend().hasValue()) {
            append.addAll(cmd.getJvmArgsAppend().get());
        }
        ChainedOptionsBuilder opts = new OptionsBuilder().parent(cmd).jvmArgsAppend(append.toArray(String[]::new));
        new Runner(opts.build()).run();
    }
}
