package dev.cor.examples.hello;

import dev.cor.rest.CorArgs;

/** The example's flags. */
record HelloOptions(String host, int port, int httpLoops, int coroutines, int workers, boolean help) {
    static final String USAGE = """
            usage: hello [--port N] [--host H] [--httpLoops N] [--coroutines N] [--workers N]
              --port N        port to listen on (default 8080; 0 = any free port)
              --host H        address to bind (default 0.0.0.0)
              --httpLoops N   event loops (default: one per core)
              --coroutines N  live coroutines per loop; 0 turns coroutines off, so /slow takes the worker hop (default 1024)
              --workers N     worker threads for the hop (default 32)""";

    static HelloOptions parse(String[] args) {
        String host = "0.0.0.0";
        int port = 8080;
        int loops = Runtime.getRuntime().availableProcessors();
        int coroutines = 1024;
        int workers = 32;
        boolean help = false;
        CorArgs a = new CorArgs(args);
        for (String flag = a.next(); flag != null; flag = a.next()) {
            switch (flag) {
                case "-h", "--help" -> help = true;
                case "--host" -> host = a.value();
                case "--port" -> port = a.number(0, 65535);
                case "--httpLoops" -> loops = a.number(1, 1024);
                case "--coroutines" -> coroutines = a.number(0, 1_000_000);
                case "--workers" -> workers = a.number(1, 4096);
                default -> throw a.unknown();
            }
        }
        return new HelloOptions(host, port, loops, coroutines, workers, help);
    }
}
