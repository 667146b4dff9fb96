package dev.cor.examples.hello;

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
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-h", "--help" -> help = true;
                case "--host" -> host = value(args, ++i, a);
                case "--port" -> port = number(args, ++i, a, 0, 65535);
                case "--httpLoops" -> loops = number(args, ++i, a, 1, 1024);
                case "--coroutines" -> coroutines = number(args, ++i, a, 0, 1_000_000);
                case "--workers" -> workers = number(args, ++i, a, 1, 4096);
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        return new HelloOptions(host, port, loops, coroutines, workers, help);
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    private static int number(String[] args, int i, String flag, int min, int max) {
        String v = value(args, i, flag);
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " takes a number from " + min + " to " + max + ", not " + v);
        }
    }
}
