package dev.kaas.broker.group;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.SyncGroupResponseData;

/**
 * A member of a classic group. Its group's file carries the members of the last completed
 * rebalance ({@link GroupStore.StoredMembership}), so a coordinator move keeps them, as Apache's.
 */
final class Member {
    final String memberId;
    final String groupInstanceId;
    final String clientId;
    final String clientHost;
    int rebalanceTimeoutMs;
    int sessionTimeoutMs;
    final String protocolType;
    /** Protocol name → metadata, in the member's order of preference. */
    Map<String, byte[]> protocols;
    byte[] assignment = new byte[0];
    /** The waiting JoinGroup / SyncGroup answers: set and taken only by {@link ClassicGroup}, which counts them. */
    Consumer<JoinGroupResponseData> awaitingJoin;
    Consumer<SyncGroupResponseData> awaitingSync;
    boolean isNew;

    Member(String memberId, String groupInstanceId, String clientId, String clientHost, int rebalanceTimeoutMs,
           int sessionTimeoutMs, String protocolType, Map<String, byte[]> protocols) {
        this.memberId = memberId;
        this.groupInstanceId = groupInstanceId;
        this.clientId = clientId;
        this.clientHost = clientHost;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.protocolType = protocolType;
        this.protocols = new LinkedHashMap<>(protocols);
    }

    boolean isStatic() {
        return groupInstanceId != null;
    }

    boolean isAwaitingJoin() {
        return awaitingJoin != null;
    }

    boolean isAwaitingSync() {
        return awaitingSync != null;
    }

    byte[] metadata(String protocol) {
        byte[] m = protocols.get(protocol);
        if (m == null) {
            throw new IllegalStateException("member " + memberId + " does not support protocol " + protocol);
        }
        return m;
    }

    /** Same protocols, same order, same metadata: a rejoin that changes nothing. */
    boolean matches(Map<String, byte[]> other) {
        if (other.size() != protocols.size()) {
            return false;
        }
        var a = protocols.entrySet().iterator();
        var b = other.entrySet().iterator();
        while (a.hasNext()) {
            var x = a.next();
            var y = b.next();
            if (!x.getKey().equals(y.getKey()) || !Arrays.equals(x.getValue(), y.getValue())) {
                return false;
            }
        }
        return true;
    }
}
