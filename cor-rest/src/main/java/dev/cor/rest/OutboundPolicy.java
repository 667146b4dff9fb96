package dev.cor.rest;

import java.net.InetAddress;
import java.util.List;

/**
 * Which addresses a client may connect to: asked with the address a host name resolved to, right
 * before each new connection is opened - after the name lookup, on the very address connected to,
 * so a name that resolves into a refused range is refused, and so is every redirect, whose new
 * origin needs a new connection. The HTTP and {@code cor://} clients ask it, and the broker's MQTT
 * notifications. A refusal is one text whatever the address and port ({@link #REFUSAL}): an answer
 * must not map a network the caller cannot see.
 * <p>
 * Implementations are asked on any thread, loop threads included: they answer at once, never
 * block, and are thread-safe.
 */
@FunctionalInterface
public interface OutboundPolicy {
    /** Every address allowed: the default, as Orion-LD and Scorpio have it. */
    OutboundPolicy ALLOW_ALL = address -> true;

    /** The one text of every refusal: it names neither the address nor the port. */
    String REFUSAL = "the address of this URL is not allowed by the outbound policy";

    /** Whether a connection to {@code address} may be opened. */
    boolean permits(InetAddress address);

    /**
     * A firewall's rule over CIDR ranges (IPv4 {@code 10.0.0.0/8}, IPv6 {@code fc00::/7}, or one
     * address without a prefix): an address is refused when it lies in a {@code deny} range and
     * in no {@code allow} range - an allow range carves an exception out of the deny ranges, and
     * without deny ranges everything is allowed. An IPv4 address is also matched as its
     * IPv4-mapped IPv6 form ({@code ::ffff:a.b.c.d}).
     *
     * @throws IllegalArgumentException naming the first text that is not a CIDR range
     */
    static OutboundPolicy ranges(List<String> deny, List<String> allow) {
        return new CidrPolicy(CidrRange.parseAll(deny), CidrRange.parseAll(allow));
    }
}
