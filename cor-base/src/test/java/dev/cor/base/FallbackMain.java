package dev.cor.base;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Forked by {@link CorCoTest} without the export: a start is refused and the task takes the hop. */
public final class FallbackMain {
    private FallbackMain() {
    }

    public static void main(String[] args) throws Exception {
        CorCoLoop loop = CorCoLoop.builder().name("fallback-loop").build().attach();
        CorCoTask task = () -> 6 * 7;
        CorCo co = CorCo.start(task);
        if (co != null) {
            System.out.println("started a coroutine without the export?");
            return;
        }
        CorCoLoop second = CorCoLoop.builder().name("second").build(); // the line is said once per JVM
        ExecutorService workers = Executors.newFixedThreadPool(1);
        Future<Object> f = workers.submit(task::run);
        System.out.println("start refused; hop ran: " + f.get() + " (cap " + loop.coroutineCap() + "/" + second.coroutineCap() + ")");
        workers.shutdown();
        loop.stop();
        loop.runOnce(0);
    }
}
