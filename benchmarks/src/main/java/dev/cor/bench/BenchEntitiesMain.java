package dev.cor.bench;

import java.nio.charset.StandardCharsets;

import dev.cor.examples.gateway.BenchEntities;

/**
 * Prints one of the bench entities ({@code small} or {@code attrs20}) as the gateway serves it,
 * so that a script can give the broker the very same entity: {@code java -cp benchmarks.jar
 * dev.cor.bench.BenchEntitiesMain small}.
 */
public final class BenchEntitiesMain {
    private BenchEntitiesMain() {
    }

    public static void main(String[] args) {
        String which = args.length == 1 ? args[0] : "";
        byte[] json = switch (which) {
            case "small" -> BenchEntities.SMALL;
            case "attrs20" -> BenchEntities.ATTRS20;
            default -> {
                System.err.println("usage: BenchEntitiesMain small|attrs20");
                System.exit(2);
                yield null;
            }
        };
        System.out.print(new String(json, StandardCharsets.UTF_8));
    }
}
