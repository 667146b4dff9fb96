package dev.cor.rest.proto;

import java.util.Arrays;

import org.agrona.collections.Object2IntHashMap;

/**
 * The name tables of one connection (spec § 6.4): object keys and header names sent in full once
 * per direction, then by number. {@link Out} is the sending side's, {@link In} the receiving
 * side's; they grow in step, frame by frame, never evict, and stop growing at the agreed size.
 * One thread each (the connection's).
 */
final class NameTable {
    /** {@code v} of a new name, appended by both sides. */
    static final int NEW = 0;
    /** {@code v} of a literal name, appended by nobody. */
    static final int LITERAL = 1;
    /** {@code v} of the name numbered 0. */
    static final int FIRST_REF = 2;
    /** The longest name a table takes, in UTF-8 bytes. */
    static final int MAX_TABLE_NAME_BYTES = 512;

    private NameTable() {
    }

    /** The sending side: name to number, and the names in order (to take a dropped frame's back out). */
    static final class Out {
        /** Agrona's map: a name's number without boxing, once per name encoded. */
        private final Object2IntHashMap<String> numbers = new Object2IntHashMap<>(-1);
        private String[] names = new String[64];
        private int size;
        private int capacity;

        Out(int capacity) {
            this.capacity = capacity;
        }

        void capacity(int capacity) {
            this.capacity = capacity;
        }

        int size() {
            return size;
        }

        void write(ProtoOut out, String name) {
            int n = numbers.getValue(name);
            if (n >= 0) {
                out.putVarint(n + FIRST_REF);
                return;
            }
            int bytes = ProtoOut.utf8Length(name);
            if (size < capacity && bytes <= MAX_TABLE_NAME_BYTES) {
                out.putVarint(NEW);
                out.putString(name, bytes);
                if (size == names.length) {
                    names = Arrays.copyOf(names, Math.min(names.length * 2, Math.max(capacity, 64)));
                }
                numbers.put(name, size);
                names[size++] = name;
            } else {
                out.putVarint(LITERAL);
                out.putString(name, bytes);
            }
        }

        /** Takes back every name appended since {@code mark} (a frame that was not sent). */
        void rollback(int mark) {
            while (size > mark) {
                numbers.removeKey(names[--size]);
                names[size] = null;
            }
        }
    }

    /** The receiving side: number to name. */
    static final class In {
        private String[] names = new String[64];
        private int size;
        private int capacity;

        In(int capacity) {
            this.capacity = capacity;
        }

        void capacity(int capacity) {
            this.capacity = capacity;
        }

        int size() {
            return size;
        }

        String read(ProtoIn in) throws CorProtoException {
            long v = in.varint("name");
            if (v >= FIRST_REF) {
                long i = v - FIRST_REF;
                if (i >= size) {
                    throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD,
                            "name number " + i + " not in the table (" + size + " names)");
                }
                return names[(int) i];
            }
            // A literal may be as long as the frame: the long names are why literals exist.
            String name = in.string(v == NEW ? MAX_TABLE_NAME_BYTES : Integer.MAX_VALUE, "name");
            if (v == NEW) {
                if (size >= capacity) {
                    throw CorProtoException.violation(CorProtoError.INVALID_PAYLOAD,
                            "a new name with the name table full (" + capacity + " names)");
                }
                if (size == names.length) {
                    names = Arrays.copyOf(names, Math.min(names.length * 2, Math.max(capacity, 64)));
                }
                names[size++] = name;
            }
            return name;
        }
    }
}
