package dev.kaas.broker.group;

/** The group coordinator's settings (see {@code BrokerConfig.Group} for the keys); {@link #defaults()} are Apache 3.7's. */
public record GroupConfig(int minSessionTimeoutMs, int maxSessionTimeoutMs, int initialRebalanceDelayMs, int maxSize,
                          long offsetsRetentionMs, int offsetMetadataMaxBytes, long offsetsRetentionCheckIntervalMs) {
    public static GroupConfig defaults() {
        return new GroupConfig(6_000, 1_800_000, 3_000, Integer.MAX_VALUE, 7L * 24 * 3600 * 1000, 4096, 600_000);
    }

    /** Apache's {@code GroupCoordinator.NewMemberJoinTimeoutMs}: a new member that never completes its join is dropped. */
    static final int NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000;
}
