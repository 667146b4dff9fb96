package dev.cor.examples.gateway;

import java.nio.charset.StandardCharsets;

/**
 * The NGSI-LD entities every forwarding-chain measurement serves, as the exact JSON text: the
 * gateway example ({@code --preload}) and the Netty chain node it is compared with answer with
 * these same bytes, so a comparison never differs by payload. Immutable; anyone may read them.
 */
public final class BenchEntities {
    /** Id of the small entity: id, type and one property. */
    public static final String SMALL_ID = "urn:ngsi-ld:Bench:small";

    /** The small entity as JSON. */
    public static final String SMALL_JSON =
            "{\"id\":\"urn:ngsi-ld:Bench:small\",\"type\":\"Bench\",\"name\":{\"type\":\"Property\",\"value\":\"small\"}}";

    /** Id of the entity with twenty numeric properties. */
    public static final String ATTRS20_ID = "urn:ngsi-ld:Bench:attrs20";

    /** The twenty-property entity as JSON: {@code attr01}..{@code attr20}, each a numeric Property. */
    public static final String ATTRS20_JSON = "{\"id\":\"urn:ngsi-ld:Bench:attrs20\",\"type\":\"Bench\","
            + "\"attr01\":{\"type\":\"Property\",\"value\":1.5},"
            + "\"attr02\":{\"type\":\"Property\",\"value\":2.5},"
            + "\"attr03\":{\"type\":\"Property\",\"value\":3.5},"
            + "\"attr04\":{\"type\":\"Property\",\"value\":4.5},"
            + "\"attr05\":{\"type\":\"Property\",\"value\":5.5},"
            + "\"attr06\":{\"type\":\"Property\",\"value\":6.5},"
            + "\"attr07\":{\"type\":\"Property\",\"value\":7.5},"
            + "\"attr08\":{\"type\":\"Property\",\"value\":8.5},"
            + "\"attr09\":{\"type\":\"Property\",\"value\":9.5},"
            + "\"attr10\":{\"type\":\"Property\",\"value\":10.5},"
            + "\"attr11\":{\"type\":\"Property\",\"value\":11.5},"
            + "\"attr12\":{\"type\":\"Property\",\"value\":12.5},"
            + "\"attr13\":{\"type\":\"Property\",\"value\":13.5},"
            + "\"attr14\":{\"type\":\"Property\",\"value\":14.5},"
            + "\"attr15\":{\"type\":\"Property\",\"value\":15.5},"
            + "\"attr16\":{\"type\":\"Property\",\"value\":16.5},"
            + "\"attr17\":{\"type\":\"Property\",\"value\":17.5},"
            + "\"attr18\":{\"type\":\"Property\",\"value\":18.5},"
            + "\"attr19\":{\"type\":\"Property\",\"value\":19.5},"
            + "\"attr20\":{\"type\":\"Property\",\"value\":20.5}}";

    /** The small entity as UTF-8 bytes. */
    public static final byte[] SMALL = bytes(SMALL_JSON);

    /** The twenty-property entity as UTF-8 bytes. */
    public static final byte[] ATTRS20 = bytes(ATTRS20_JSON);

    private BenchEntities() {
    }

    /** A fresh UTF-8 copy of {@code json} (the constants are ASCII, so byte-identical everywhere). */
    public static byte[] bytes(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }
}
