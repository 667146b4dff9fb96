package dev.cor.base;

/**
 * Thrown out of a wait ({@link CorCo#waitFd}, {@link CorCo#sleep}, {@link CorCo#park},
 * {@link CorCo#blocking}, {@link CorCo#yield}) when the coroutine's loop stops, or when its
 * task was cancelled ({@link CorCo#cancel}): the wait is refused, and every later wait of the
 * same coroutine is refused at once, so the coroutine can only unwind.
 */
public final class CorCoCancelledException extends CorCoException {
    private static final long serialVersionUID = 1L;

    CorCoCancelledException(String coroutine) {
        super(coroutine + " cancelled: its loop is stopping");
    }

    CorCoCancelledException(String coroutine, String why) {
        super(coroutine + " cancelled: " + why);
    }
}
