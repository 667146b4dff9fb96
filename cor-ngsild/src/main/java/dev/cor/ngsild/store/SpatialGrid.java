package dev.cor.ngsild.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A spatial index of one GeoProperty in one tenant: a fixed grid of {@value #CELL_DEGREES} degree
 * cells, each holding the ids of the entities whose geometry's bounding box touches it; a
 * geometry spanning more than {@value #MAX_CELLS} cells goes to a list checked by every search.
 * Updated inside the store's per-id critical section (so one id's entries change one write at a
 * time); searched by any reader without a lock, seeing each id before or after a write. Unlike a
 * static R-tree (JTS's STRtree is built once) it stays current on every write at the cost of
 * a few set operations.
 */
final class SpatialGrid {
    static final double CELL_DEGREES = 0.01;
    static final int MAX_CELLS = 4096;
    private static final int COLUMNS = (int) Math.round(360 / CELL_DEGREES) + 1;

    private final Map<Long, Set<String>> cells = new ConcurrentHashMap<>();
    private final Set<String> wide = ConcurrentHashMap.newKeySet();

    /** Moves an id from the boxes of its old geometries to those of its new ones (either list may be empty). */
    void update(String id, List<JsonNode> before, List<JsonNode> after) {
        for (JsonNode g : before) {
            double[] b = box(g);
            if (b != null) {
                place(id, b, false);
            }
        }
        for (JsonNode g : after) {
            double[] b = box(g);
            if (b != null) {
                place(id, b, true);
            }
        }
    }

    private void place(String id, double[] b, boolean add) {
        int x0 = column(b[0]);
        int x1 = column(b[2]);
        int y0 = row(b[1]);
        int y1 = row(b[3]);
        if ((long) (x1 - x0 + 1) * (y1 - y0 + 1) > MAX_CELLS) {
            if (add) {
                wide.add(id);
            } else {
                wide.remove(id);
            }
            return;
        }
        for (int x = x0; x <= x1; x++) {
            for (int y = y0; y <= y1; y++) {
                long key = (long) y * COLUMNS + x;
                if (add) {
                    cells.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(id);
                } else {
                    Set<String> s = cells.get(key);
                    if (s != null) {
                        s.remove(id);
                    }
                }
            }
        }
    }

    /** The ids whose boxes may touch the search box (a superset), each once. */
    Collection<String> search(double minLon, double minLat, double maxLon, double maxLat) {
        int x0 = column(minLon);
        int x1 = column(maxLon);
        int y0 = row(minLat);
        int y1 = row(maxLat);
        if ((long) (x1 - x0 + 1) * (y1 - y0 + 1) > cells.size()) {
            // a search wider than the grid is full: walk the cells that exist
            Set<String> out = new HashSet<>(wide);
            cells.forEach((key, ids) -> {
                long y = key / COLUMNS;
                long x = key % COLUMNS;
                if (x >= x0 && x <= x1 && y >= y0 && y <= y1) {
                    out.addAll(ids);
                }
            });
            return out;
        }
        List<Set<String>> hit = new ArrayList<>();
        for (int x = x0; x <= x1; x++) {
            for (int y = y0; y <= y1; y++) {
                Set<String> s = cells.get((long) y * COLUMNS + x);
                if (s != null && !s.isEmpty()) {
                    hit.add(s);
                }
            }
        }
        if (hit.size() == 1 && wide.isEmpty()) {
            return List.copyOf(hit.get(0));
        }
        Set<String> out = new HashSet<>(wide);
        for (Set<String> s : hit) {
            out.addAll(s);
        }
        return out;
    }

    /** A cheap upper bound of {@link #search}'s size. */
    int estimate(double minLon, double minLat, double maxLon, double maxLat) {
        int x0 = column(minLon);
        int x1 = column(maxLon);
        int y0 = row(minLat);
        int y1 = row(maxLat);
        if ((long) (x1 - x0 + 1) * (y1 - y0 + 1) > cells.size()) {
            return Integer.MAX_VALUE;
        }
        long n = wide.size();
        for (int x = x0; x <= x1; x++) {
            for (int y = y0; y <= y1; y++) {
                Set<String> s = cells.get((long) y * COLUMNS + x);
                if (s != null) {
                    n += s.size();
                }
            }
        }
        return (int) Math.min(n, Integer.MAX_VALUE);
    }

    private static int column(double lon) {
        return (int) Math.floor((clamp(lon, -180, 180) + 180) / CELL_DEGREES);
    }

    private static int row(double lat) {
        return (int) Math.floor((clamp(lat, -90, 90) + 90) / CELL_DEGREES);
    }

    private static double clamp(double v, double lo, double hi) {
        return v < lo ? lo : v > hi ? hi : v;
    }

    /** The [minLon, minLat, maxLon, maxLat] of a GeoJSON geometry's positions, or {@code null}. */
    static double[] box(JsonNode geometry) {
        double[] b = {Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
                Double.NEGATIVE_INFINITY};
        walk(geometry == null ? null : geometry.get("coordinates"), b, 0);
        return b[0] <= b[2] ? b : null;
    }

    private static void walk(JsonNode n, double[] b, int depth) {
        if (n == null || !n.isArray() || n.isEmpty() || depth > 4) {
            return;
        }
        if (n.get(0).isNumber()) {
            if (n.size() >= 2 && n.get(1).isNumber()) {
                double x = n.get(0).asDouble();
                double y = n.get(1).asDouble();
                b[0] = Math.min(b[0], x);
                b[1] = Math.min(b[1], y);
                b[2] = Math.max(b[2], x);
                b[3] = Math.max(b[3], y);
            }
            return;
        }
        for (JsonNode c : n) {
            walk(c, b, depth + 1);
        }
    }
}
