package dev.cor.bench.load;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.function.IntFunction;

import dev.cor.bench.cli.Endpoint;
import dev.cor.bench.cli.Flags.FlagException;

/**
 * Picks the {@link Target} for a run's URL: {@code http://} is {@link HttpTarget}, {@code cor://}
 * is {@link CorProtoTarget}. Refuses a host
 * that is not a loopback address unless the run allows remote hosts, since the generator is
 * meant for servers on the same machine. Called by {@link CorRequest}.
 */
public final class Targets {
    private Targets() {
    }

    /**
     * The target for {@code options.url()}.
     *
     * @throws TargetUnavailableException for a protocol this build cannot drive
     * @throws FlagException              for a host that cannot be used
     */
    public static Target create(LoadOptions options) throws TargetUnavailableException {
        return switch (options.url().scheme()) {
            case "http" -> {
                Endpoint u = options.url();
                IntFunction<HttpRequestBytes> requests;
                if (u.requestTarget().contains(HttpRequestBytes.SOCKET_IN_URL)) { // a request of each socket's own
                    requests = socket -> HttpRequestBytes.encode(new Endpoint(u.scheme(), u.host(), u.port(),
                            u.requestTarget().replace(HttpRequestBytes.SOCKET_IN_URL, Integer.toString(socket))),
                            options.method(), options.headers(), options.body());
                } else {
                    HttpRequestBytes one = HttpRequestBytes.encode(u, options.method(), options.headers(), options.body());
                    requests = socket -> one;
                }
                yield new HttpTarget(resolve(options), requests, options.method().equals("HEAD"), options.timeoutMs());
            }
            case "cor" -> {
                if (new String(options.body(), java.nio.charset.StandardCharsets.ISO_8859_1).contains(HttpRequestBytes.SEQ)) {
                    throw new FlagException("--body-file: " + HttpRequestBytes.SEQ + " is served over http:// only");
                }
                if (options.url().requestTarget().contains(HttpRequestBytes.SOCKET_IN_URL)) {
                    throw new FlagException("--url: " + HttpRequestBytes.SOCKET + " is served over http:// only");
                }
                yield new CorProtoTarget(resolve(options), options.url().requestTarget(), options.method(),
                    options.headers(), options.body(), options.timeoutMs());
            }
            default -> throw new TargetUnavailableException(options.url().scheme() + ":// is not supported");
        };
    }

    private static InetSocketAddress resolve(LoadOptions options) {
        InetAddress ip;
        try {
            ip = InetAddress.getByName(options.url().host());
        } catch (UnknownHostException e) {
            throw new FlagException("--url: unknown host " + options.url().host());
        }
        if (!ip.isLoopbackAddress() && !options.allowRemote()) {
            throw new FlagException("--url: " + options.url().host() + " is not a loopback address;"
                    + " load goes to this machine only unless --allow-remote is given");
        }
        return new InetSocketAddress(ip, options.url().port());
    }
}
