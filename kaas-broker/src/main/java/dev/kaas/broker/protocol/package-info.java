/**
 * The Kafka front door.
 *
 * <p>Threading contract: a {@link dev.kaas.broker.protocol.Connection} lives on one Vert.x
 * event loop. Framing, header and body decode, dispatch to an {@link dev.kaas.broker.protocol.ApiHandler},
 * response encode and the socket write all run on that loop. Handlers must not block: they
 * return a {@link java.util.concurrent.CompletionStage} and do file I/O on the storage workers
 * or the partition serial executors. Completions may arrive on any thread; the connection hops
 * back to its loop before touching its state, and writes responses strictly in request order
 * (Kafka clients match responses to requests by order).
 */
package dev.kaas.broker.protocol;
