package dev.kaas.broker.group;

import java.util.EnumSet;
import java.util.Set;

/**
 * The classic group protocol's states, with the transitions Apache's {@code GroupMetadata}
 * allows. {@link ClassicGroup#transitionTo} refuses any other: an illegal transition is a bug.
 *
 * <pre>
 * Empty ──join──▶ PreparingRebalance ──all joined / timeout──▶ CompletingRebalance ──leader sync──▶ Stable
 *   ▲                 ▲    │ (no members left)                        │                                │
 *   └─────────────────┼────┘                                          └──member change / leader join───┘
 * any ──delete / expiry / slot lost──▶ Dead
 * </pre>
 */
public enum GroupState {
    EMPTY("Empty"),
    PREPARING_REBALANCE("PreparingRebalance"),
    COMPLETING_REBALANCE("CompletingRebalance"),
    STABLE("Stable"),
    DEAD("Dead");

    private final String wireName;

    GroupState(String wireName) {
        this.wireName = wireName;
    }

    /** The name DescribeGroups and ListGroups report, as Apache spells it. */
    public String wireName() {
        return wireName;
    }

    Set<GroupState> validPrevious() {
        return switch (this) {
            case EMPTY -> EnumSet.of(PREPARING_REBALANCE);
            case PREPARING_REBALANCE -> EnumSet.of(STABLE, COMPLETING_REBALANCE, EMPTY);
            case COMPLETING_REBALANCE -> EnumSet.of(PREPARING_REBALANCE);
            case STABLE -> EnumSet.of(COMPLETING_REBALANCE);
            case DEAD -> EnumSet.of(STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD);
        };
    }

    public static GroupState fromWireName(String name) {
        for (GroupState s : values()) {
            if (s.wireName.equalsIgnoreCase(name)) {
                return s;
            }
        }
        return null;
    }
}
