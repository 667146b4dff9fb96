package dev.cor.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library jars are named modules a host can use from the module path: an application module
 * that requires {@code dev.cor.ngsild} and {@code dev.cor.http} compiles against their exports,
 * mounts a broker with {@code service} and serves a create and a read - and one that imports
 * the broker's HTTP binding, an internal package, does not compile. The jars are the ones this
 * build packaged (the launcher's tests run after them).
 */
class ModulePathTest {
    /** The runtime jars of the four library modules and of their dependencies, from this test's class path. */
    private static final List<String> RUNTIME = List.of("cor-base-", "cor-rest-", "cor-http-", "cor-ngsild-",
            "jackson-databind-", "jackson-core-", "jackson-annotations-", "micrometer-core-", "micrometer-commons-",
            "micrometer-observation-", "HdrHistogram-", "LatencyUtils-", "jctools-core-", "agrona-", "jts-core-",
            "org.eclipse.paho.client.mqttv3-", "postgresql-", "checker-qual-");

    private static String modulePath() {
        List<String> found = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Path.of(e).getFileName().toString();
            if (name.endsWith(".jar") && !name.contains("-tests") && RUNTIME.stream().anyMatch(name::startsWith)) {
                found.add(e);
            }
        }
        for (String m : List.of("cor-base-", "cor-rest-", "cor-http-", "cor-ngsild-")) {
            assertTrue(found.stream().anyMatch(e -> Path.of(e).getFileName().toString().startsWith(m)),
                    m + "*.jar is not on the class path (the library modules are packaged before the launcher's tests)");
        }
        return String.join(File.pathSeparator, found);
    }

    private static String javac(String... args) {
        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        java.io.PrintStream ps = new java.io.PrintStream(out, true, StandardCharsets.UTF_8);
        int rc = javac.run(ps, ps, args);
        return rc + "\n" + out.toString(StandardCharsets.UTF_8);
    }

    private static void write(Path dir, String module, String main) throws IOException {
        Files.createDirectories(dir.resolve("app/app"));
        Files.writeString(dir.resolve("app/module-info.java"), module);
        Files.writeString(dir.resolve("app/app/Main.java"), main);
    }

    @Test
    void aHostModuleMountsTheBrokerFromTheModulePath(@TempDir Path dir) throws Exception {
        String mp = modulePath();
        write(dir.resolve("src"), "module app { requires dev.cor.ngsild; requires dev.cor.http; requires java.net.http; }",
                """
                package app;

                import java.net.URI;
                import java.net.http.HttpClient;
                import java.net.http.HttpRequest;
                import java.net.http.HttpResponse;

                import dev.cor.http.CorHttpServer;
                import dev.cor.ngsild.CorNgsild;

                public class Main {
                    public static void main(String[] args) throws Exception {
                        CorNgsild broker = CorNgsild.builder().build();
                        CorHttpServer server = CorHttpServer.builder().host("127.0.0.1").port(0).loops(1).service(broker)
                                .build().start();
                        String base = "http://127.0.0.1:" + server.port() + "/ngsi-ld/v1/entities";
                        try (HttpClient c = HttpClient.newHttpClient()) {
                            int created = c.send(HttpRequest.newBuilder(URI.create(base)).header("Content-Type", "application/json")
                                    .POST(HttpRequest.BodyPublishers.ofString("{\\"id\\":\\"urn:m:1\\",\\"type\\":\\"T\\"}")).build(),
                                    HttpResponse.BodyHandlers.discarding()).statusCode();
                            HttpResponse<String> read = c.send(HttpRequest.newBuilder(URI.create(base + "/urn:m:1")).build(),
                                    HttpResponse.BodyHandlers.ofString());
                            System.out.println(created + " " + read.statusCode() + " " + read.body() + " "
                                    + broker.status().entities(""));
                        }
                        server.stop();
                    }
                }
                """);
        String compiled = javac("-d", dir.resolve("out").toString(), "--module-path", mp, "--module-source-path",
                dir.resolve("src").toString(), "-m", "app");
        assertTrue(compiled.startsWith("0\n"), compiled);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "--add-exports", "java.base/jdk.internal.vm=dev.cor.base",
                "--module-path", mp + File.pathSeparator + dir.resolve("out/app"), "-m", "app/app.Main")
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("201 200 {\"id\":\"urn:m:1\",\"type\":\"T\"} 1"), out);
    }

    @Test
    void aHostModuleCannotReachTheBrokersInternals(@TempDir Path dir) throws Exception {
        write(dir.resolve("src"), "module app { requires dev.cor.ngsild; }", """
                package app;

                public class Main {
                    public static void main(String[] args) {
                        System.out.println(dev.cor.ngsild.http.NgsildApplication.BASE_PATH);
                    }
                }
                """);
        String compiled = javac("-d", dir.resolve("out").toString(), "--module-path", modulePath(),
                "--module-source-path", dir.resolve("src").toString(), "-m", "app");
        assertNotEquals('0', compiled.charAt(0), compiled);
        assertTrue(compiled.contains("package dev.cor.ngsild.http is not visible"), compiled);
    }
}
