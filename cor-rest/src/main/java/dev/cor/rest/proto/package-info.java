/**
 * {@code cor://}, the broker-to-broker protocol (doc/cor-protocol.md): binary frames, many
 * requests in flight on one connection, bodies as already-parsed JSON trees whose names are sent
 * once per connection.
 * <ul>
 * <li>{@link dev.cor.rest.proto.CorProtoServer} serves it on the loops, through the same
 * {@link dev.cor.rest.CorRestDispatcher} as HTTP;</li>
 * <li>{@link dev.cor.rest.proto.CorProtoClient} sends requests over shared, multiplexed
 * connections - yielding in a coroutine, blocking on a plain thread - and
 * {@link dev.cor.rest.proto.CorProtoCall} is one in flight, for a fan-out;</li>
 * <li>{@link dev.cor.rest.proto.CorProtoResponse} is an answer,
 * {@link dev.cor.rest.proto.CorProtoException} a failure typed for a gateway's 502 / 504;</li>
 * <li>{@link dev.cor.rest.proto.CorProtoCodec} is one connection's codec, for tools, tests and
 * benchmarks.</li>
 * </ul>
 * Everything else is package-private: the connections, the buffers, the name tables, the tree
 * codec.
 */
package dev.cor.rest.proto;
