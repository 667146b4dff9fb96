/**
 * The query languages of NGSI-LD, parsed once and evaluated against immutable {@link
 * dev.cor.ngsild.model.Entity} records from any thread: {@link dev.cor.ngsild.query.QueryExpression}
 * ({@code q}, § 4.9), {@link dev.cor.ngsild.query.GeoQuery} (§ 4.10, through JTS),
 * {@link dev.cor.ngsild.query.ScopeQuery} ({@code scopeQ}, § 4.19) and
 * {@link dev.cor.ngsild.query.BoundedPattern} (a regular expression whose matching cost is
 * bounded). Each {@code parse} takes the request's {@link dev.cor.ngsild.ld.LdContext} where names
 * need expanding and throws a BadRequestData {@link dev.cor.ngsild.error.NgsiLdException} pointing
 * at what is wrong; each {@code test(Entity)} is a pure function of the record (a pattern that
 * backtracks without bound throws TooComplexQuery). Query Entities runs them through the
 * planner of {@code dev.cor.ngsild.http}; a subscription keeps the parsed objects and tests each
 * written record. {@link dev.cor.ngsild.query.TemporalAggregation} ({@code aggrMethods},
 * {@code aggrPeriodDuration}, § 4.5.19) is parsed the same way and aggregates one attribute's
 * instances, read through accessors so that this package stays below the store's.
 * {@link dev.cor.ngsild.query.LinkedEntities} joins the entities relationships point to (§ 4.5.23)
 * for answers and notifications alike, reading them through a lookup for the same reason.
 */
package dev.cor.ngsild.query;
