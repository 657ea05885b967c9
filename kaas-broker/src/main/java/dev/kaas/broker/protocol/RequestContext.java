package dev.kaas.broker.protocol;

import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * What a handler knows about the request besides its body.
 *
 * @param listenerName the listener the connection arrived on: Metadata answers with that listener's advertised endpoints
 * @param clientHost the peer address as Apache reports it to group tools ({@code /127.0.0.1})
 * @param principal who the connection authenticated as (ANONYMOUS on a PLAINTEXT listener, or a
 *                  TLS one without a client certificate)
 * @param securityProtocol the listener's protocol: over TLS, record bytes go through the heap
 * @param throttle the request's size, and how long a handler found the client must wait (a quota)
 */
public record RequestContext(RequestHeader header, String listenerName, String clientHost, KafkaPrincipal principal,
                             SecurityProtocol securityProtocol, Throttle throttle) {
    public RequestContext(RequestHeader header, String listenerName, String clientHost) {
        this(header, listenerName, clientHost, KafkaPrincipal.ANONYMOUS, SecurityProtocol.PLAINTEXT);
    }

    public RequestContext(RequestHeader header, String listenerName, String clientHost, KafkaPrincipal principal,
                          SecurityProtocol securityProtocol) {
        this(header, listenerName, clientHost, principal, securityProtocol, new Throttle(0));
    }

    /**
     * A quota's verdict on one request (KIP-219): the handler sets the delay and puts it in its
     * response's {@code throttle_time_ms}; the connection then reads nothing more from the client
     * for that long once the response is written (or at once, when there is none: acks=0).
     */
    public static final class Throttle {
        private final int requestBytes;
        private volatile int ms;

        public Throttle(int requestBytes) {
            this.requestBytes = requestBytes;
        }

        /** The request's size without its size field (Apache's request.sizeInBytes), as Apache's produce quota counts it. */
        public int requestBytes() {
            return requestBytes;
        }

        public void throttle(int delayMs) {
            ms = Math.max(ms, delayMs);
        }

        public int ms() {
            return ms;
        }
    }

    public String clientId() {
        return header.clientId() == null ? "" : header.clientId();
    }

    /** Whether segment bytes may go from the file to the socket without a copy (not through TLS). */
    public boolean zeroCopy() {
        return securityProtocol == SecurityProtocol.PLAINTEXT || securityProtocol == SecurityProtocol.SASL_PLAINTEXT;
    }

    public short apiVersion() {
        return header.apiVersion();
    }
}
