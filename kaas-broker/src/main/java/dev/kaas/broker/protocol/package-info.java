/**
 * The Kafka front door.
 *
 * <p>Threading contract: a {@link dev.kaas.broker.protocol.Connection} (the Vert.x socket
 * binding) with its {@link dev.kaas.broker.protocol.FrameDecoder} and
 * {@link dev.kaas.broker.protocol.RequestPipeline} lives on one Vert.x event loop. Framing,
 * header and body decode, dispatch to an {@link dev.kaas.broker.protocol.ApiHandler}, response
 * encode and the socket write all run on that loop. Handlers must not block: they return a
 * {@link java.util.concurrent.CompletionStage} and do file I/O on the storage workers or the
 * partition serial executors. Completions may arrive on any thread; the pipeline hops back to
 * its loop before touching its state, and writes responses strictly in request order (Kafka
 * clients match responses to requests by order).
 *
 * <p>Shared across loops, and thread-safe: {@link dev.kaas.broker.protocol.RequestMemory} (the
 * {@code queued.max.request.bytes} budget; a release wakes waiting connections, which retry on
 * their own loop) and {@link dev.kaas.broker.protocol.ConnectionLimits} (per-address and broker-wide counts).
 * Limits and their keys: src/docs/running.md and src/docs/compatibility.md.
 */
package dev.kaas.broker.protocol;
