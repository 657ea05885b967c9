package dev.kaas.broker.group;

/**
 * One committed offset as persisted: the leader epoch and metadata the client sent, and the
 * commit time that offset expiry counts from.
 */
public record CommittedOffset(long offset, int leaderEpoch, String metadata, long commitTimestamp, long expireTimestamp) {
}
