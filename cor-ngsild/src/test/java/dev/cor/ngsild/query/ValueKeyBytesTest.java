package dev.cor.ngsild.query;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * {@link ValueKey#bytes}: unsigned byte order is the keys' own order, for every pair of a random
 * set that holds the edges - each kind's lowest and highest, -0.0 and 0.0, infinities, texts with
 * NUL, with code units on both sides of the surrogates (where UTF-8's order and UTF-16's differ),
 * and a text that is a prefix of another.
 */
class ValueKeyBytesTest {
    @Test
    void bytesSortAsTheKeysSort() {
        long seed = Long.getLong("cor.valuekey.seed", System.nanoTime());
        Random r = new Random(seed);
        List<ValueKey> keys = new ArrayList<>(List.of(ValueKey.number(-0.0), ValueKey.number(0.0),
                ValueKey.number(Double.NEGATIVE_INFINITY), ValueKey.number(Double.POSITIVE_INFINITY),
                ValueKey.number(Double.MIN_VALUE), ValueKey.number(-Double.MAX_VALUE), ValueKey.bool(false), ValueKey.bool(true),
                ValueKey.time(0), ValueKey.time(-1), ValueKey.text(""), ValueKey.text("\u0000"), ValueKey.text("a"),
                ValueKey.text("a\u0000"), ValueKey.text("\uFFFF"), ValueKey.text("\uD83D\uDE00"), ValueKey.text("\uE000")));
        for (byte kind = 0; kind <= ValueKey.TEXT; kind++) {
            keys.add(ValueKey.lowest(kind));
            keys.add(ValueKey.highest(kind));
        }
        char[] alphabet = {0, 'a', 'b', 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFFFF};
        for (int i = 0; i < 400; i++) {
            switch (r.nextInt(4)) {
                case 0 -> keys.add(ValueKey.number(r.nextBoolean() ? r.nextGaussian() * 1e6 : r.nextInt(7) - 3));
                case 1 -> keys.add(ValueKey.time(r.nextLong() >> 20));
                case 2 -> keys.add(ValueKey.bool(r.nextBoolean()));
                default -> {
                    char[] t = new char[r.nextInt(4)];
                    for (int k = 0; k < t.length; k++) {
                        t[k] = alphabet[r.nextInt(alphabet.length)];
                    }
                    keys.add(ValueKey.text(new String(t)));
                }
            }
        }
        for (ValueKey a : keys) {
            for (ValueKey b : keys) {
                assertEquals(Integer.signum(a.compareTo(b)), Integer.signum(Arrays.compareUnsigned(a.bytes(), b.bytes())),
                        "seed " + seed + " (-Dcor.valuekey.seed): " + a + " against " + b);
            }
        }
    }
}
