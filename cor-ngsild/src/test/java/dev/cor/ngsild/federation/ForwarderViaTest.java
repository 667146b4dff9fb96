package dev.cor.ngsild.federation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.InstantSource;
import java.util.List;

import dev.cor.rest.client.CorRestClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * How a forward reads and writes {@code Via} (RFC 9110 § 7.6.3, NGSI-LD § 4.3.6.4): an entry is
 * {@code protocol received-by [comment]}, entries are comma-separated over one or more header
 * lines, and a loop is an entry received by this broker - by its exact name.
 */
class ForwarderViaTest {
    final CorRestClient client = CorRestClient.builder().build();
    final Forwarder f = new Forwarder(client, "B", 1_000, InstantSource.system());

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void an_entry_received_by_this_broker_is_a_loop() {
        assertTrue(f.seenIn(List.of("1.1 B")));
        assertTrue(f.seenIn(List.of("1.1 A, 1.1 B")));
        assertTrue(f.seenIn(List.of("1.1 A,1.1 B,1.1 C")));
        assertTrue(f.seenIn(List.of("HTTP/1.1 A", "  1.1\tB  (cor)  ")));
        assertTrue(f.seenIn(List.of("1.1 A, , 1.1 B")));
    }

    @Test
    void another_name_or_no_received_by_is_not() {
        assertFalse(f.seenIn(List.of()));
        assertFalse(f.seenIn(List.of("")));
        assertFalse(f.seenIn(List.of("1.1 BB, 1.1 AB, 1.1 b")));
        assertFalse(f.seenIn(List.of("B")), "a protocol alone names no broker");
        assertFalse(f.seenIn(List.of("1.1 A (B)")), "a comment is not the receiver");
        assertFalse(f.seenIn(List.of(",,")));
    }

    @Test
    void a_forward_adds_this_broker_after_the_incoming_entries() {
        assertEquals("1.1 B", f.via(List.of()));
        assertEquals("1.1 A, 1.1 X, 1.1 B", f.via(List.of("1.1 A", " 1.1 X ")));
    }
}
