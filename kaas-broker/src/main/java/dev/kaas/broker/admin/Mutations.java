package dev.kaas.broker.admin;

import dev.kaas.broker.protocol.RequestContext;
import dev.kaas.proto.MutationClient;

/**
 * The client a topic or partition change is counted against for {@code controller_mutation_rate},
 * which the controller enforces cluster-wide (KIP-599), and the delay it answers with.
 */
final class Mutations {
    private Mutations() {
    }

    /**
     * @param strictSince the request's first version that refuses changes past the quota
     *                    (THROTTLING_QUOTA_EXCEEDED); older ones are served and only delayed
     */
    static MutationClient client(RequestContext ctx, int strictSince) {
        return MutationClient.newBuilder().setUser(ctx.principal().getName()).setClientId(ctx.clientId())
                .setStrict(ctx.apiVersion() >= strictSince).build();
    }

    /** The controller's delay: answered as throttle_time_ms, and the connection not read for that long (KIP-219). */
    static void throttle(RequestContext ctx, int ms) {
        if (ms > 0) {
            ctx.throttle().throttle(ms);
        }
    }
}
