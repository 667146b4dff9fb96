/**
 * cor's runtime: event loops ({@code CorCoLoop}) whose requests that wait run as stackful
 * coroutines ({@code CorCo}) of the loop, over the JDK's internal continuations. Compiling it, and
 * running it, takes {@code --add-exports java.base/jdk.internal.vm=dev.cor.base} (on the class
 * path: {@code =ALL-UNNAMED}).
 */
module dev.cor.base {
    requires jdk.jfr;
    requires org.jctools.core;

    exports dev.cor.base;
}
