package dev.cor.rest;

import java.lang.management.ClassLoadingMXBean;
import java.lang.management.ManagementFactory;

/**
 * Run in a fresh JVM by {@link CorRestWarmUpTest}: builds a dispatcher, as a server does when it is
 * wired, then prints how many classes the first problem-details answer ({@link CorRest#fail})
 * loads - what would otherwise happen on the loop of the first request that fails.
 */
public final class FirstFailMain {
    private FirstFailMain() {
    }

    public static void main(String[] args) {
        try (CorRestWorkers workers = CorRestWorkers.create(1)) {
            CorRestDispatcher.builder().application(new CorRestApplication() {
                @Override
                public boolean canWait(CorRest request) {
                    return false;
                }

                @Override
                public void handle(CorRest request) {
                }
            }).workers(workers).build();
            CorRest request = CorRest.builder("GET", "/x").build();
            CorRestException failure = new CorRestException(500, "Internal Server Error", "the first failure");
            ClassLoadingMXBean classes = ManagementFactory.getClassLoadingMXBean();
            long before = classes.getTotalLoadedClassCount();
            request.fail(failure);
            long loaded = classes.getTotalLoadedClassCount() - before;
            System.out.println("classesLoadedByTheFirstFail=" + loaded);
        }
    }
}
