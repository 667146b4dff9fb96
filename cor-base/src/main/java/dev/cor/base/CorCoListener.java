package dev.cor.base;

/**
 * Told when a coroutine's task has finished - returned or thrown. It runs inside the
 * coroutine, on its loop's thread, right after the task, so it may itself wait (a server
 * writing the answer on a full socket buffer does); {@link CorCo#result()} and
 * {@link CorCo#error()} hold the outcome. After it returns the coroutine may be reused.
 */
@FunctionalInterface
public interface CorCoListener {
    void onDone(CorCo co);
}
