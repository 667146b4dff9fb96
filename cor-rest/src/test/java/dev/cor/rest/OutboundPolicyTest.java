package dev.cor.rest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The firewall rule of {@link OutboundPolicy#ranges}: refused when in a deny range and in no allow range. */
class OutboundPolicyTest {
    private static final List<String> MULTI_TENANT = List.of("0.0.0.0/8", "::/128", "127.0.0.0/8", "::1/128",
            "169.254.0.0/16", "fe80::/10", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7");

    private static InetAddress ip(String literal) {
        return InetAddress.ofLiteral(literal);
    }

    @Test
    void the_multi_tenant_ranges_refuse_loopback_link_local_and_private_addresses_of_both_families() {
        OutboundPolicy p = OutboundPolicy.ranges(MULTI_TENANT, List.of());
        for (String refused : List.of("127.0.0.1", "127.255.0.9", "::1", "169.254.169.254", "fe80::1", "10.1.2.3",
                "172.16.0.1", "172.31.255.255", "192.168.1.1", "fd00::1", "fc00::", "0.0.0.0", "::", "::ffff:127.0.0.1",
                "::ffff:10.0.0.1")) {
            assertFalse(p.permits(ip(refused)), refused);
        }
        for (String allowed : List.of("8.8.8.8", "172.32.0.1", "172.15.255.255", "192.169.0.1", "2001:db8::1",
                "fec0::1", "1.0.0.0", "11.0.0.0")) {
            assertTrue(p.permits(ip(allowed)), allowed);
        }
    }

    @Test
    void an_allow_range_carves_an_exception_out_of_a_deny_range() {
        OutboundPolicy p = OutboundPolicy.ranges(List.of("127.0.0.0/8"), List.of("127.0.0.1/32"));
        assertTrue(p.permits(ip("127.0.0.1")));
        assertFalse(p.permits(ip("127.0.0.2")));
        assertTrue(p.permits(ip("10.0.0.1")), "outside every deny range");
    }

    @Test
    void allow_ranges_without_deny_ranges_allow_everything_and_deny_all_with_exceptions_is_an_allow_list() {
        assertTrue(OutboundPolicy.ranges(List.of(), List.of("10.0.0.0/8")).permits(ip("8.8.8.8")));
        OutboundPolicy only = OutboundPolicy.ranges(List.of("0.0.0.0/0", "::/0"), List.of("10.1.0.0/16", "2001:db8::/32"));
        assertTrue(only.permits(ip("10.1.200.3")));
        assertTrue(only.permits(ip("2001:db8:1::5")));
        assertFalse(only.permits(ip("10.2.0.1")));
        assertFalse(only.permits(ip("2001:db9::1")));
    }

    @Test
    void prefixes_that_are_not_whole_bytes_and_host_bits_are_handled_as_a_firewall_does() {
        OutboundPolicy p = OutboundPolicy.ranges(List.of("172.16.9.9/12", "fe80::/10", "10.0.0.5"), List.of());
        assertFalse(p.permits(ip("172.20.0.1")));
        assertTrue(p.permits(ip("172.32.0.1")));
        assertFalse(p.permits(ip("febf::1")));
        assertTrue(p.permits(ip("fec0::1")));
        assertFalse(p.permits(ip("10.0.0.5")), "an address alone is its own /32");
        assertTrue(p.permits(ip("10.0.0.6")));
    }

    @Test
    void a_text_that_is_not_a_cidr_range_is_refused_with_its_name() {
        for (String bad : List.of("10.0.0.0/33", "::/129", "localhost/8", "10.0.0/8", "10.0.0.0/", "10.0.0.0/-1",
                "", "example.com", "1.2.3.4/8/8")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> OutboundPolicy.ranges(List.of(bad), List.of()), bad);
            assertTrue(e.getMessage().contains("not a CIDR range: '" + bad + "'"), e.getMessage());
        }
        assertEquals(OutboundPolicy.REFUSAL, "the address of this URL is not allowed by the outbound policy");
    }
}
