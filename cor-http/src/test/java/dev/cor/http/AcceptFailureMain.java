package dev.cor.http;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Logger;
import java.util.stream.Stream;

import dev.cor.base.CorCoLoop;
import dev.cor.base.testing.LogCapture;
import dev.cor.rest.proto.CorProtoServer;

/**
 * Run in a JVM with a low descriptor limit by {@link CorHttpAcceptFailureTest}: a cor-http server
 * and a cor:// server on its loop, every descriptor then taken, a client of each connecting - so
 * that both acceptors' accept() fails with "too many open files" - for one second, then the
 * descriptors freed. Prints what the acceptors' loop did meanwhile as {@code key=value} lines.
 */
public final class AcceptFailureMain {
    private AcceptFailureMain() {
    }

    public static void main(String[] args) throws Exception {
        Logger root = Logger.getLogger("");
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h); // a spinning acceptor would print a stack trace per round
        }
        LogCapture log = LogCapture.of("");
        CorHttpServer http = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).application(new TestApp()).build().start();
        CorCoLoop loop = http.loops().get(0);
        CorProtoServer proto = CorProtoServer.builder().loops(http.loops()).dispatcher(http.dispatcher()).build().start();
        SocketChannel httpClient = SocketChannel.open(); // their descriptors now: connecting needs none more
        SocketChannel protoClient = SocketChannel.open();
        preloadClasses();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();

        List<InputStream> hog = new ArrayList<>();
        try {
            while (true) {
                hog.add(new FileInputStream("/dev/null"));
            }
        } catch (IOException full) {
            // every descriptor is taken
        }
        httpClient.connect(new InetSocketAddress("127.0.0.1", http.port())); // into the backlog: accept() fails
        protoClient.connect(new InetSocketAddress("127.0.0.1", proto.port()));
        Thread.sleep(100);
        long cpu0 = threads.getThreadCpuTime(loop.thread().threadId());
        long logs0 = acceptLogLines(log);
        Thread.sleep(1000);
        long cpuMs = TimeUnit.NANOSECONDS.toMillis(threads.getThreadCpuTime(loop.thread().threadId()) - cpu0);
        long logs = acceptLogLines(log) - logs0;
        for (InputStream in : hog) {
            in.close();
        }

        httpClient.write(ByteBuffer.wrap("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        httpClient.socket().setSoTimeout(10_000);
        byte[] status = httpClient.socket().getInputStream().readNBytes(12);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (proto.connectionsAccepted() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        System.out.println("descriptorsTaken=" + hog.size());
        System.out.println("loopCpuMs=" + cpuMs);
        System.out.println("acceptLogLines=" + logs);
        System.out.println("acceptLogLinesInAll=" + acceptLogLines(log));
        System.out.println("httpAnswer=" + new String(status, StandardCharsets.US_ASCII).trim());
        System.out.println("protoAccepted=" + proto.connectionsAccepted());
        httpClient.close();
        protoClient.close();
        proto.stop();
        http.stop(500);
        System.exit(0);
    }

    private static long acceptLogLines(LogCapture log) {
        return log.records().stream().filter(r -> r.getMessage() != null && r.getMessage().contains("accept")).count();
    }

    /**
     * Loads every class of the classpath's directories, and opens every jar, while descriptors
     * remain: loading a class from a directory opens a file.
     */
    private static void preloadClasses() throws IOException, ClassNotFoundException {
        ClassLoader loader = AcceptFailureMain.class.getClassLoader();
        loader.getResource("dev/cor/none"); // a look-up that visits, and so opens, every jar
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            Path dir = Path.of(entry);
            if (!Files.isDirectory(dir)) {
                continue;
            }
            List<String> names;
            try (Stream<Path> files = Files.walk(dir)) {
                names = files.filter(f -> f.toString().endsWith(".class")).map(f -> dir.relativize(f).toString())
                        .map(n -> n.substring(0, n.length() - ".class".length()).replace(java.io.File.separatorChar, '.'))
                        .filter(n -> !n.endsWith("package-info") && !n.endsWith("module-info")).toList();
            }
            for (String n : names) {
                Class.forName(n, false, loader);
            }
        }
    }
}
