package dev.cor.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The status line's reason phrase (RFC 9110 § 15): the registered one, or a plain stand-in. */
class ReasonPhraseTest {

    @Test
    void statusesABrokerAnswersCarryTheirRegisteredPhrase() {
        assertEquals("Multi-Status", HttpConnection.reasonPhrase(207));
        assertEquals("Conflict", HttpConnection.reasonPhrase(409));
        assertEquals("Loop Detected", HttpConnection.reasonPhrase(508)); // RFC 5842 § 7.2, NGSI-LD LoopDetected
    }

    @Test
    void anUnregisteredStatusNamesItsNumber() {
        assertEquals("Status 599", HttpConnection.reasonPhrase(599));
    }
}
