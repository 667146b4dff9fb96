package dev.cor.base;

/** Forked by {@link CorCoTest}: a yield with a CorCoLock held, under -Dcor.debug=true. */
public final class LockRuleMain {
    private LockRuleMain() {
    }

    public static void main(String[] args) {
        CorCoLoop loop = CorCoLoop.builder().name("lock-loop").build().attach();
        CorCoLock lock = new CorCoLock();
        CorCo held = CorCo.start(() -> {
            lock.lock();
            try {
                CorCo.yield();
                return "yielded";
            } finally {
                lock.unlock();
            }
        }, co -> System.out.println(co.error() != null ? "refused: " + co.error().getMessage() : "allowed: " + co.result()));
        System.out.println("state after: " + held.state());
        CorCo free = CorCo.start(() -> {
            CorCo.yield();
            return "yielded";
        }, co -> System.out.println("without the lock: " + co.result()));
        free.resume();
        loop.stop();
        loop.runOnce(0);
    }
}
