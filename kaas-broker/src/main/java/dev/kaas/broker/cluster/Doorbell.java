package dev.kaas.broker.cluster;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.function.IntConsumer;
import org.jboss.logging.Logger;

/**
 * The doorbell between brokers, which never talk to each other: {@link #ring} asks the controller
 * to pass a nudge down another broker's stream; a nudge that arrives on ours is handed to the
 * listener. A nudge carries nothing but who rang: what to look at is on the volume. A lost nudge
 * costs only latency (the listener also sweeps on a timer), so ringing never fails the caller.
 *
 * <p>Threading: {@link #ring} does not block; the listener is called on a gRPC thread and must not block either.
 */
@ApplicationScoped
public class Doorbell {
    private static final Logger LOG = Logger.getLogger(Doorbell.class);

    private final ControllerAdmin controller;
    private final ClusterView view;
    private volatile IntConsumer listener = from -> { };

    public Doorbell(ControllerAdmin controller, ClusterView view) {
        this.controller = controller;
        this.view = view;
    }

    public void onRing(IntConsumer listener) {
        this.listener = listener;
    }

    public void ring(int targetBroker) {
        controller.nudge(targetBroker, view.brokerId()).whenComplete((delivered, e) -> {
            if (e != null || !Boolean.TRUE.equals(delivered)) {
                LOG.debugf("nudge to broker %d not delivered: %s", targetBroker, e == null ? "no session" : e.toString());
            }
        });
    }

    void rung(int fromBroker) {
        try {
            listener.accept(fromBroker);
        } catch (RuntimeException e) {
            LOG.warnf(e, "nudge from broker %d not handled", fromBroker);
        }
    }
}
