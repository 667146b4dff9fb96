package dev.cor.ngsild.store;

import java.util.List;
import java.util.Map;

import dev.cor.ngsild.query.AggregatedPeriod;
import dev.cor.ngsild.query.AggregationMethod;

/**
 * The aggregated representation (§ 4.5.19) of one datasetId of one attribute, as
 * {@link TemporalStore#aggregate} answers it: per method asked, its periods. Immutable.
 *
 * @param datasetId the datasetId, or {@code null}: the default instances
 * @param type      the NGSI-LD type of the attribute's last instance in the window
 * @param periods   per method, in the order asked, its periods in time order
 */
public record DatasetAggregate(String datasetId, String type, Map<AggregationMethod, List<AggregatedPeriod>> periods) {
}
