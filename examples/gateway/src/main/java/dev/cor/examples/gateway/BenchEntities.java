package dev.cor.examples.gateway;

import java.nio.charset.StandardCharsets;

/**
 * The two entities the forwarding chain is measured with, as the bytes every node answers -
 * shared by the gateway and by the Netty chain it is compared with, so both move the same bytes.
 */
public final class BenchEntities {
    public static final String SMALL_ID = "urn:ngsi-ld:Bench:small";
    public static final String ATTRS20_ID = "urn:ngsi-ld:Bench:attrs20";

    public static final byte[] SMALL = ("{\"id\":\"" + SMALL_ID + "\",\"type\":\"Bench\","
            + "\"temperature\":{\"type\":\"Property\",\"value\":21.5}}").getBytes(StandardCharsets.UTF_8);

    public static final byte[] ATTRS20 = attrs20().getBytes(StandardCharsets.UTF_8);

    private BenchEntities() {
    }

    private static String attrs20() {
        StringBuilder sb = new StringBuilder("{\"id\":\"" + ATTRS20_ID + "\",\"type\":\"Bench\"");
        for (int i = 1; i <= 20; i++) {
            sb.append(",\"attr").append(i < 10 ? "0" : "").append(i).append("\":{\"type\":\"Property\",\"value\":")
                    .append(i * 1.5).append('}');
        }
        return sb.append('}').toString();
    }
}
