package dev.cor.rest;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * One CIDR range, IPv4 or IPv6, as {@link OutboundPolicy#ranges} takes it: the address's bytes and
 * how many leading bits must match. An IPv4 range is kept as such; an IPv6 range that is
 * IPv4-mapped ({@code ::ffff:10.0.0.0/104}) is kept in its 16 bytes, and an IPv4 address is
 * matched against IPv6 ranges in its mapped form. Immutable; any thread.
 */
final class CidrRange {
    private final byte[] network;
    private final int prefix;
    private final String text;

    private CidrRange(byte[] network, int prefix, String text) {
        this.network = network;
        this.prefix = prefix;
        this.text = text;
    }

    static List<CidrRange> parseAll(List<String> texts) {
        List<CidrRange> out = new ArrayList<>(texts.size());
        for (String t : texts) {
            out.add(parse(t));
        }
        return List.copyOf(out);
    }

    /** {@code a.b.c.d/n}, {@code x:y::z/n}, or one address (the whole prefix). */
    static CidrRange parse(String text) {
        String t = text.strip();
        int slash = t.indexOf('/');
        String literal = slash < 0 ? t : t.substring(0, slash);
        byte[] bytes = bytes(literal, text);
        int max = bytes.length * 8;
        int prefix = max;
        if (slash >= 0) {
            String p = t.substring(slash + 1);
            try {
                prefix = p.isEmpty() || p.length() > 3 ? -1 : Integer.parseInt(p);
            } catch (NumberFormatException e) {
                prefix = -1;
            }
            if (prefix < 0 || prefix > max) {
                throw new IllegalArgumentException("not a CIDR range: '" + text + "' (the prefix length takes 0 to " + max + ")");
            }
        }
        // the host bits are ignored, as a firewall does: 10.1.2.3/8 is 10.0.0.0/8
        return new CidrRange(bytes, prefix, t);
    }

    /** The address's bytes: 4 for IPv4, 16 for IPv6 (an IPv4-mapped one kept as 16). */
    private static byte[] bytes(String literal, String text) {
        boolean v6 = literal.indexOf(':') >= 0;
        // four dotted numbers: not the legacy short forms (10.1 for 10.0.0.1) InetAddress also takes
        boolean v4 = !v6 && literal.chars().filter(c -> c == '.').count() == 3
                && literal.chars().allMatch(c -> (c >= '0' && c <= '9') || c == '.');
        if (!v4 && !v6) {
            throw new IllegalArgumentException("not a CIDR range: '" + text + "' (an IPv4 or IPv6 address, then /prefix)");
        }
        InetAddress a;
        try {
            a = InetAddress.ofLiteral(literal); // parses only, never asks a name service
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a CIDR range: '" + text + "' (an IPv4 or IPv6 address, then /prefix)");
        }
        byte[] b = a.getAddress();
        return v6 && b.length == 4 ? mapped(b) : b; // ::ffff:a.b.c.d comes back as IPv4: keep it IPv6, as written
    }

    private static byte[] mapped(byte[] v4) {
        byte[] b = new byte[16];
        b[10] = (byte) 0xff;
        b[11] = (byte) 0xff;
        System.arraycopy(v4, 0, b, 12, 4);
        return b;
    }

    boolean contains(InetAddress address) {
        byte[] a = address.getAddress();
        if (a.length != network.length) {
            if (!(address instanceof Inet4Address) || network.length != 16) {
                return false;
            }
            a = mapped(a);
        }
        int full = prefix / 8;
        for (int i = 0; i < full; i++) {
            if (a[i] != network[i]) {
                return false;
            }
        }
        int rest = prefix % 8;
        if (rest == 0) {
            return true;
        }
        int mask = (0xff << (8 - rest)) & 0xff;
        return (a[full] & mask) == (network[full] & mask);
    }

    @Override
    public String toString() {
        return text;
    }
}
