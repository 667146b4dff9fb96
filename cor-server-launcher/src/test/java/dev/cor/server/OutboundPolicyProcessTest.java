package dev.cor.server;

import static dev.cor.server.OutboundCalls.awaitLog;
import static dev.cor.server.OutboundCalls.create;
import static dev.cor.server.OutboundCalls.createWithContext;
import static dev.cor.server.OutboundCalls.detail;
import static dev.cor.server.OutboundCalls.notified;
import static dev.cor.server.OutboundCalls.queryWarnings;
import static dev.cor.server.OutboundCalls.register;
import static dev.cor.server.OutboundCalls.subscribe;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code --outboundDeny}/{@code --outboundAllow} through the jar, with the README's line for a
 * multi-tenant broker as written: loopback peers - a context, a receiver, a source - are never
 * connected to, and every refusal is the same text. Linux answers all of 127.0.0.0/8 on loopback:
 * 127.0.0.1 allowed and 127.0.0.2 denied on one machine show a redirect into a denied range.
 */
@Tag("process")
class OutboundPolicyProcessTest {
    /** The ranges of the README's line for a multi-tenant broker, read from the README as written there. */
    private static String readmeDenyLine() throws Exception {
        String readme = Files.readString(Path.of(System.getProperty("user.dir"), "..", "README.md"));
        Matcher m = Pattern.compile("\\n  --outboundDeny (\\S+)\\n```").matcher(readme);
        assertTrue(m.find(), "no --outboundDeny example in the README");
        String ranges = m.group(1);
        for (String r : List.of("127.0.0.0/8", "::1/128", "169.254.0.0/16", "fe80::/10", "10.0.0.0/8", "172.16.0.0/12",
                "192.168.0.0/16", "fc00::/7")) {
            assertTrue(List.of(ranges.split(",")).contains(r), "the README's line lost " + r + ": " + ranges);
        }
        return ranges;
    }
    private static final String REFUSAL = "the address of this URL is not allowed by the outbound policy";

    @Test
    void the_readmes_multi_tenant_line_refuses_a_loopback_context_notification_and_forward_before_connecting() throws Exception {
        try (OutboundPeer peer = OutboundPeer.http("127.0.0.1");
                ServerProcess s = ServerProcess.start("--store", "memory", "--httpLoops", "1", "--outboundDeny", readmeDenyLine())) {
            String url = peer.url(OutboundPeer.CONTEXT_PATH);
            HttpResponse<String> r = createWithContext(s, url);
            assertEquals(504, r.statusCode(), r.body());
            assertEquals("the @context " + url + " is not available: " + REFUSAL, detail(r));
            HttpResponse<String> v6 = createWithContext(s, "http://[::1]:1/ctx.jsonld");
            assertEquals("the @context http://[::1]:1/ctx.jsonld is not available: " + REFUSAL, detail(v6),
                    "the same text whatever the address and port (nothing listens on this one)");

            subscribe(s, "urn:ngsi-ld:Subscription:policy", "PolicyBike", peer.url(OutboundPeer.NOTIFY_PATH));
            create(s, "PolicyBike");
            JsonNode n = notified(s, "urn:ngsi-ld:Subscription:policy");
            assertEquals("failed", n.path("status").asText(), n.toString());
            awaitLog(s, "notifications of subscription urn:ngsi-ld:Subscription:policy fail: " + REFUSAL);

            register(s, "urn:ngsi-ld:ContextSourceRegistration:policy", "PolicyRoom", peer.origin());
            String warnings = queryWarnings(s, "PolicyRoom");
            assertTrue(warnings.contains("registration urn:ngsi-ld:ContextSourceRegistration:policy (" + peer.origin() + "): "
                    + REFUSAL), warnings);
            // every answer above came after its attempt was over: a connection would have been counted by then
            assertEquals(0, peer.requests.get(), "the denied peer was connected to");
        }
    }

    @Test
    void a_redirect_from_an_allowed_address_into_a_denied_range_is_refused() throws Exception {
        try (OutboundPeer allowed = OutboundPeer.http("127.0.0.1"); OutboundPeer denied = OutboundPeer.http("127.0.0.2");
                ServerProcess s = ServerProcess.start("--store", "memory", "--httpLoops", "1",
                        "--outboundDeny", "127.0.0.0/8", "--outboundAllow", "127.0.0.1/32")) {
            assertEquals(201, createWithContext(s, allowed.url(OutboundPeer.CONTEXT_PATH)).statusCode(), "127.0.0.1 is allowed");
            allowed.redirectTo = denied.url(OutboundPeer.CONTEXT_PATH);
            String url = allowed.url("/ctx.jsonld?moved");
            HttpResponse<String> r = createWithContext(s, url);
            assertEquals(504, r.statusCode(), r.body());
            assertEquals("the @context " + url + " is not available: " + REFUSAL, detail(r));
            assertEquals(2, allowed.requests.get(), "the first hop was refused");
            assertEquals(0, denied.requests.get(), "the redirect's target in the denied range was connected to");
        }
    }
}
