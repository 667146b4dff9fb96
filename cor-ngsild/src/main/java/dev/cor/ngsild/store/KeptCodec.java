package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.cor.ngsild.ld.LdContexts;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;

/**
 * The stores' binary form of what their keepers keep of a subscription and a registration: the
 * durable store's journal and snapshot frames and the PostgreSQL store's rows hold the same bytes.
 * Beside the records it writes (the codec package below knows no store). For store
 * implementations; stateless, any thread.
 */
public final class KeptCodec {
    private KeptCodec() {
    }

    /**
     * A subscription: tenant, id, createdAt and modifiedAt (zigzag), timesSent and timesFailed
     * (varlong), lastNotification, lastSuccess, lastFailure (zigzag, -1 for none), the broker URL
     * (nullable string), the subscriber's {@code @context} (JSON), the document (JSON), then the
     * number of remote context documents (varlong) and each one's URL, URL after redirects, and
     * {@code @context} (JSON).
     */
    public static void writeSubscription(ByteSink out, SubscriptionKeeper.Kept k) {
        SubscriptionKeeper.Status st = k.status();
        out.string(k.tenant());
        out.string(k.id());
        out.zigzag(st.createdAt());
        out.zigzag(st.modifiedAt());
        out.varlong(st.timesSent());
        out.varlong(st.timesFailed());
        out.zigzag(st.lastNotification());
        out.zigzag(st.lastSuccess());
        out.zigzag(st.lastFailure());
        out.nullableString(k.brokerUrl());
        EntityCodec.writeJson(out, k.context());
        EntityCodec.writeJson(out, k.document());
        writeDocuments(out, k.documents());
    }

    /**
     * A registration: tenant, id, createdAt and modifiedAt (zigzag), the registrant's
     * {@code @context} (JSON), the document (JSON), then the remote context documents as a
     * subscription's. Its forwards' counters are not kept: they count what this process sent.
     */
    public static void writeRegistration(ByteSink out, RegistrationKeeper.Kept k) {
        out.string(k.tenant());
        out.string(k.id());
        out.zigzag(k.createdAt());
        out.zigzag(k.modifiedAt());
        EntityCodec.writeJson(out, k.context());
        EntityCodec.writeJson(out, k.document());
        writeDocuments(out, k.documents());
    }

    public static void writeDocuments(ByteSink out, List<LdContexts.RemoteDocument> documents) {
        out.varlong(documents.size());
        for (LdContexts.RemoteDocument d : documents) {
            out.string(d.url());
            out.string(d.documentUrl());
            EntityCodec.writeJson(out, d.context());
        }
    }

    public static List<LdContexts.RemoteDocument> readDocuments(ByteSource in, EntityCodec codec, String what)
            throws ByteSource.Malformed {
        long n = in.varlong();
        if (n < 0 || n > in.remaining()) {
            throw new ByteSource.Malformed("a " + what + " names " + n + " context documents");
        }
        List<LdContexts.RemoteDocument> docs = new ArrayList<>((int) n);
        for (long i = 0; i < n; i++) {
            docs.add(new LdContexts.RemoteDocument(in.string(), in.string(), codec.readJson(in, 0)));
        }
        return List.copyOf(docs);
    }

    public static RegistrationKeeper.Kept readRegistration(ByteSource in, EntityCodec codec) throws ByteSource.Malformed {
        String tenant = codec.name(in.string());
        String id = in.string();
        long createdAt = in.zigzag();
        long modifiedAt = in.zigzag();
        JsonNode context = codec.readJson(in, 0);
        if (!(codec.readJson(in, 0) instanceof ObjectNode document)) {
            throw new ByteSource.Malformed("a registration's document is not a JSON object");
        }
        return new RegistrationKeeper.Kept(tenant, id, document, context, readDocuments(in, codec, "registration"),
                createdAt, modifiedAt);
    }

    public static SubscriptionKeeper.Kept readSubscription(ByteSource in, EntityCodec codec) throws ByteSource.Malformed {
        String tenant = codec.name(in.string());
        String id = in.string();
        SubscriptionKeeper.Status st = new SubscriptionKeeper.Status(in.zigzag(), in.zigzag(), in.varlong(), in.varlong(),
                in.zigzag(), in.zigzag(), in.zigzag());
        String brokerUrl = in.nullableString();
        JsonNode context = codec.readJson(in, 0);
        if (!(codec.readJson(in, 0) instanceof ObjectNode document)) {
            throw new ByteSource.Malformed("a subscription's document is not a JSON object");
        }
        return new SubscriptionKeeper.Kept(tenant, id, document, context, readDocuments(in, codec, "subscription"),
                brokerUrl, st);
    }

}
