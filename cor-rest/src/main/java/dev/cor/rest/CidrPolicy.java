package dev.cor.rest;

import java.net.InetAddress;
import java.util.List;

/** {@link OutboundPolicy#ranges}: refused when in a deny range and in no allow range. Immutable; any thread. */
final class CidrPolicy implements OutboundPolicy {
    private final List<CidrRange> deny;
    private final List<CidrRange> allow;

    CidrPolicy(List<CidrRange> deny, List<CidrRange> allow) {
        this.deny = deny;
        this.allow = allow;
    }

    @Override
    public boolean permits(InetAddress address) {
        return !any(deny, address) || any(allow, address);
    }

    private static boolean any(List<CidrRange> ranges, InetAddress address) {
        for (CidrRange r : ranges) {
            if (r.contains(address)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "deny " + deny + " except " + allow;
    }
}
