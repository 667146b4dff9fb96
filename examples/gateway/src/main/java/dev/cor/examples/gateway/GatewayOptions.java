package dev.cor.examples.gateway;

import dev.cor.rest.CorArgs;

/** The gateway's flags. */
record GatewayOptions(String host, int port, int corPort, String next, int httpLoops, int coroutines, int workers,
                      boolean preload, boolean help) {
    static final String USAGE = """
            usage: gateway [--port N] [--corPort N] [--next URL] [--preload] [--host H]
                           [--httpLoops N] [--coroutines N] [--workers N]
              --port N        HTTP port (default 8080; 0 = any free port)
              --corPort N     cor:// port, served on the same loops (default: none)
              --next URL      the next hop for ids not held here: http://host:port or cor://host:port
              --preload       hold urn:ngsi-ld:Bench:small and urn:ngsi-ld:Bench:attrs20
              --host H        address to bind (default 0.0.0.0)
              --httpLoops N   event loops (default: one per core)
              --coroutines N  live coroutines per loop; 0 = every forward takes the worker hop (default 1024)
              --workers N     worker threads for the hop (default 32)""";

    static GatewayOptions parse(String[] args) {
        String host = "0.0.0.0";
        int port = 8080;
        int corPort = -1;
        String next = null;
        int loops = Runtime.getRuntime().availableProcessors();
        int coroutines = 1024;
        int workers = 32;
        boolean preload = false;
        boolean help = false;
        CorArgs a = new CorArgs(args);
        for (String flag = a.next(); flag != null; flag = a.next()) {
            switch (flag) {
                case "-h", "--help" -> help = true;
                case "--host" -> host = a.value();
                case "--port" -> port = a.number(0, 65535);
                case "--corPort" -> corPort = a.number(0, 65535);
                case "--next" -> next = nextHop(a.value());
                case "--preload" -> preload = true;
                case "--httpLoops" -> loops = a.number(1, 1024);
                case "--coroutines" -> coroutines = a.number(0, 1_000_000);
                case "--workers" -> workers = a.number(1, 4096);
                default -> throw a.unknown();
            }
        }
        return new GatewayOptions(host, port, corPort, next, loops, coroutines, workers, preload, help);
    }

    private static String nextHop(String url) {
        if (!url.startsWith("http://") && !url.startsWith("cor://")) {
            throw new IllegalArgumentException("--next takes http://host:port or cor://host:port, not " + url);
        }
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
}
