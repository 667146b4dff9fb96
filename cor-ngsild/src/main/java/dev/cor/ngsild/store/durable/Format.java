package dev.cor.ngsild.store.durable;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.CRC32C;

import dev.cor.ngsild.ld.HostedContext;
import dev.cor.ngsild.model.Entity;
import dev.cor.ngsild.store.RegistrationKeeper;
import dev.cor.ngsild.store.SubscriptionKeeper;
import dev.cor.ngsild.store.codec.ByteSink;
import dev.cor.ngsild.store.codec.ByteSource;
import dev.cor.ngsild.store.codec.EntityCodec;
import dev.cor.ngsild.store.KeptCodec;

/**
 * The store's on-disk format, version {@value #VERSION} ({@code doc/storage.md} says it in
 * prose): the files' names, the 32-byte header every file begins with, the frame every record
 * is written in, and the records themselves. Stateless; the CRC32C it is given belongs to the
 * calling thread.
 */
final class Format {
    private Format() {
    }

    /** The version of every file this code writes, and the only one it reads. */
    static final int VERSION = 1;

    static final int JOURNAL_MAGIC = 0x434F524A; // "CORJ"
    static final int SNAPSHOT_MAGIC = 0x434F5253; // "CORS"
    static final int HEADER_BYTES = 32;

    /** A frame: u32 length of the body, u32 CRC32C of the length field and the body, then the body. */
    static final int FRAME_HEAD = 8;
    /** The smallest body: u64 sequence number and u8 type. */
    static final int MIN_BODY = 9;
    /** The largest body a reader takes as plausible. */
    static final int MAX_BODY = 256 << 20;

    // record types (doc/storage.md, "Records"); 8-9 are kept for registrations
    static final int TENANT = 1;
    static final int ENTITY_PUT = 2;
    static final int ENTITY_DELETE = 3;
    static final int CONTEXT_PUT = 4;
    static final int CONTEXT_DELETE = 5;
    static final int SUBSCRIPTION_PUT = 6;
    static final int SUBSCRIPTION_DELETE = 7;
    static final int REGISTRATION_PUT = 8;
    static final int REGISTRATION_DELETE = 9;
    static final int CSOURCE_SUBSCRIPTION_PUT = 10;
    static final int CSOURCE_SUBSCRIPTION_DELETE = 11;
    // the history's records (doc/storage.md, "History"); their payloads are HistoryFormat's
    static final int HISTORY_RECORD = 12;
    static final int HISTORY_ENTITY_DELETE = 13;
    static final int HISTORY_ATTRIBUTE_DELETE = 14;
    static final int HISTORY_INSTANCE_MODIFY = 15;
    static final int HISTORY_INSTANCE_DELETE = 16;
    /** The last record of a snapshot: what it holds, so that a snapshot cut short is seen as one. */
    static final int SNAPSHOT_END = 127;

    static final String JOURNAL_PREFIX = "journal-";
    static final String JOURNAL_SUFFIX = ".log";
    static final String SNAPSHOT_PREFIX = "snapshot-";
    static final String SNAPSHOT_SUFFIX = ".snap";
    static final String TEMP_SUFFIX = ".tmp";
    static final String LOCK_FILE = "cor-data.lock";

    static String journalName(long firstSeq) {
        return JOURNAL_PREFIX + String.format("%020d", firstSeq) + JOURNAL_SUFFIX;
    }

    static String snapshotName(long seq) {
        return SNAPSHOT_PREFIX + String.format("%020d", seq) + SNAPSHOT_SUFFIX;
    }

    /** The number in a file name of the form {@code prefix<20 digits>suffix}, or -1. */
    static long number(Path file, String prefix, String suffix) {
        String n = file.getFileName().toString();
        if (!n.startsWith(prefix) || !n.endsWith(suffix) || n.length() != prefix.length() + 20 + suffix.length()) {
            return -1;
        }
        String digits = n.substring(prefix.length(), prefix.length() + 20);
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return -1;
            }
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static String typeName(int type) {
        return switch (type) {
            case TENANT -> "tenant";
            case ENTITY_PUT -> "entity";
            case ENTITY_DELETE -> "entity deletion";
            case CONTEXT_PUT -> "hosted @context";
            case CONTEXT_DELETE -> "hosted @context deletion";
            case SUBSCRIPTION_PUT -> "subscription";
            case SUBSCRIPTION_DELETE -> "subscription deletion";
            case REGISTRATION_PUT -> "registration";
            case CSOURCE_SUBSCRIPTION_PUT -> "subscription to registrations";
            case CSOURCE_SUBSCRIPTION_DELETE -> "subscription to registrations deletion";
            case REGISTRATION_DELETE -> "registration deletion";
            case HISTORY_RECORD -> "history instances";
            case HISTORY_ENTITY_DELETE -> "history entity deletion";
            case HISTORY_ATTRIBUTE_DELETE -> "history attribute deletion";
            case HISTORY_INSTANCE_MODIFY -> "history instance modification";
            case HISTORY_INSTANCE_DELETE -> "history instance deletion";
            case SNAPSHOT_END -> "end of snapshot";
            default -> "type " + type;
        };
    }

    // ---------------------------------------------------------------- the header

    /** What a file's header says. */
    record Header(int magic, int version, long seq, long createdAt) {
    }

    /**
     * magic u32, version u16, flags u16 (0), sequence u64 (a journal segment's first record, the
     * last record a snapshot covers), created u64 (epoch ms), reserved u32 (0), CRC32C u32 of the
     * 28 bytes before it.
     */
    static void writeHeader(ByteSink out, int magic, long seq, long createdAt, CRC32C crc) {
        int at = out.position();
        out.u32(magic);
        out.u16(VERSION);
        out.u16(0);
        out.u64(seq);
        out.u64(createdAt);
        out.u32(0);
        crc.reset();
        crc.update(out.array(), at, HEADER_BYTES - 4);
        out.u32((int) crc.getValue());
    }

    /** The header of {@code file}, checked; a problem is a {@link ByteSource.Malformed} saying what. */
    static Header readHeader(DataFile file, int magic, CRC32C crc) throws IOException, ByteSource.Malformed {
        byte[] b = new byte[HEADER_BYTES];
        ByteBuffer bb = ByteBuffer.wrap(b);
        while (bb.hasRemaining()) {
            if (file.read(bb, bb.position()) < 0) {
                throw new ByteSource.Malformed("the file is shorter than its header (" + bb.position() + " of "
                        + HEADER_BYTES + " bytes)");
            }
        }
        crc.reset();
        crc.update(b, 0, HEADER_BYTES - 4);
        if ((int) crc.getValue() != ByteSource.getU32(b, HEADER_BYTES - 4)) {
            throw new ByteSource.Malformed("the header's CRC does not match");
        }
        ByteSource in = new ByteSource(b, 0, HEADER_BYTES);
        int m = in.u32();
        int version = in.u16();
        in.u16();
        long seq = in.u64();
        long created = in.u64();
        if (m != magic) {
            throw new ByteSource.Malformed("not a " + (magic == JOURNAL_MAGIC ? "journal segment"
                    : magic == SNAPSHOT_MAGIC ? "snapshot" : "history segment")
                    + " (magic " + Integer.toHexString(m) + ")");
        }
        if (version != VERSION) {
            throw new ByteSource.Malformed("format version " + version + ", and this broker reads version " + VERSION
                    + (version > VERSION ? " (written by a newer broker)" : ""));
        }
        return new Header(m, version, seq, created);
    }

    // ---------------------------------------------------------------- frames

    /** Starts a frame: room for its length and CRC, then its sequence number and type. Returns its start. */
    static int beginFrame(ByteSink out, long seq, int type) {
        int start = out.reserve(FRAME_HEAD);
        out.u64(seq);
        out.u8(type);
        return start;
    }

    /** Ends the frame begun at {@code start}: fills in its length and CRC. */
    static void endFrame(ByteSink out, int start, CRC32C crc) {
        byte[] b = out.array();
        int len = out.position() - start - FRAME_HEAD;
        ByteSink.putU32(b, start, len);
        crc.reset();
        crc.update(b, start, 4);
        crc.update(b, start + FRAME_HEAD, len);
        ByteSink.putU32(b, start + 4, (int) crc.getValue());
    }

    /** Whether the frame body {@code [at, at+len)} of {@code b}, with the length field at {@code at-8}, matches its CRC. */
    static boolean crcMatches(byte[] b, int frameStart, int len, CRC32C crc) {
        crc.reset();
        crc.update(b, frameStart, 4);
        crc.update(b, frameStart + FRAME_HEAD, len);
        return (int) crc.getValue() == ByteSource.getU32(b, frameStart + 4);
    }

    // ---------------------------------------------------------------- records

    /** Writes one record: its frame and payload, with the writing thread's codec and CRC. */
    static void writeRecord(ByteSink out, long seq, int type, String tenant, Object value, EntityCodec codec, CRC32C crc) {
        int start = beginFrame(out, seq, type);
        switch (type) {
            case TENANT -> out.string(tenant);
            case ENTITY_PUT -> {
                out.string(tenant);
                codec.writeEntity(out, (Entity) value);
            }
            case ENTITY_DELETE -> {
                out.string(tenant);
                out.string((String) value);
            }
            case CONTEXT_PUT -> {
                HostedContext c = (HostedContext) value;
                out.nullableString(c.tenant());
                out.string(c.id());
                out.zigzag(c.createdAt());
                EntityCodec.writeJson(out, c.context());
            }
            case CONTEXT_DELETE -> out.string((String) value);
            case SUBSCRIPTION_PUT, CSOURCE_SUBSCRIPTION_PUT -> KeptCodec.writeSubscription(out, (SubscriptionKeeper.Kept) value);
            case SUBSCRIPTION_DELETE, REGISTRATION_DELETE, CSOURCE_SUBSCRIPTION_DELETE -> {
                out.string(tenant);
                out.string((String) value);
            }
            case REGISTRATION_PUT -> KeptCodec.writeRegistration(out, (RegistrationKeeper.Kept) value);
            case HISTORY_RECORD, HISTORY_ENTITY_DELETE, HISTORY_ATTRIBUTE_DELETE, HISTORY_INSTANCE_MODIFY,
                    HISTORY_INSTANCE_DELETE -> HistoryFormat.writeOp(out, (HistoryOp) value, codec);
            case SNAPSHOT_END -> {
                long[] counts = (long[]) value;
                for (int i = 0; i < 3; i++) {
                    out.varlong(counts[i]);
                }
                // each later count only when it or one after it is not 0: a snapshot without subscriptions
                // is as version 1 began, one without registrations as before them, and so on
                int last = counts.length - 1;
                while (last >= 3 && counts[last] == 0) {
                    last--;
                }
                for (int i = 3; i <= last; i++) {
                    out.varlong(counts[i]);
                }
            }
            default -> throw new IllegalArgumentException("no record type " + type);
        }
        endFrame(out, start, crc);
    }

    /** Where the records read are applied (the recovery), or just counted (the check). */
    interface Apply {
        void tenant(String tenant);

        void put(String tenant, Entity entity);

        void delete(String tenant, String id);

        void hosted(HostedContext context);

        void unhosted(String id);

        void subscribed(SubscriptionKeeper.Kept subscription);

        void unsubscribed(String tenant, String id);

        void registered(RegistrationKeeper.Kept registration);

        void unregistered(String tenant, String id);

        void csourceSubscribed(SubscriptionKeeper.Kept subscription);

        void csourceUnsubscribed(String tenant, String id);

        /** A history record (types 12 to 16) with its journal sequence number. Default: ignored. */
        default void history(long seq, HistoryOp op) {
        }
    }

    /**
     * Decodes the payload of a record of {@code type}, number {@code seq}, and applies it. Returns the counts of a
     * {@link #SNAPSHOT_END}, else {@code null}.
     */
    static long[] readRecord(long seq, int type, ByteSource in, EntityCodec codec, Apply apply) throws ByteSource.Malformed {
        switch (type) {
            case HISTORY_RECORD, HISTORY_ENTITY_DELETE, HISTORY_ATTRIBUTE_DELETE, HISTORY_INSTANCE_MODIFY,
                    HISTORY_INSTANCE_DELETE -> apply.history(seq, HistoryFormat.readOp(type, in, codec));
            case TENANT -> apply.tenant(codec.name(in.string()));
            case ENTITY_PUT -> {
                String tenant = codec.name(in.string());
                apply.put(tenant, codec.readEntity(in));
            }
            case ENTITY_DELETE -> {
                String tenant = codec.name(in.string());
                apply.delete(tenant, in.string());
            }
            case CONTEXT_PUT -> {
                String tenant = in.nullableString();
                String id = in.string();
                long created = in.zigzag();
                apply.hosted(new HostedContext(id, tenant, codec.readJson(in, 0), created));
            }
            case CONTEXT_DELETE -> apply.unhosted(in.string());
            case SUBSCRIPTION_PUT -> apply.subscribed(KeptCodec.readSubscription(in, codec));
            case SUBSCRIPTION_DELETE -> {
                String tenant = codec.name(in.string());
                apply.unsubscribed(tenant, in.string());
            }
            case REGISTRATION_PUT -> apply.registered(KeptCodec.readRegistration(in, codec));
            case REGISTRATION_DELETE -> {
                String tenant = codec.name(in.string());
                apply.unregistered(tenant, in.string());
            }
            case CSOURCE_SUBSCRIPTION_PUT -> apply.csourceSubscribed(KeptCodec.readSubscription(in, codec));
            case CSOURCE_SUBSCRIPTION_DELETE -> {
                String tenant = codec.name(in.string());
                apply.csourceUnsubscribed(tenant, in.string());
            }
            case SNAPSHOT_END -> {
                // tenants, entities, hosted contexts; then, as far as written: subscriptions, registrations,
                // subscriptions to registrations
                long[] counts = {in.varlong(), in.varlong(), in.varlong(), 0, 0, 0};
                for (int i = 3; i < counts.length && in.remaining() > 0; i++) {
                    counts[i] = in.varlong();
                }
                if (in.remaining() != 0) {
                    throw new ByteSource.Malformed(in.remaining() + " bytes left over after a record of " + typeName(type));
                }
                return counts;
            }
            default -> throw new ByteSource.Malformed("a record of " + typeName(type)
                    + ", which this broker does not know (written by a newer one?)");
        }
        if (in.remaining() != 0) {
            throw new ByteSource.Malformed(in.remaining() + " bytes left over after a record of " + typeName(type));
        }
        return null;
    }
}
