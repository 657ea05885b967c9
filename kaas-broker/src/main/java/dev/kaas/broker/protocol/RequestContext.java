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
 */
public record RequestContext(RequestHeader header, String listenerName, String clientHost, KafkaPrincipal principal,
                             SecurityProtocol securityProtocol) {
    public RequestContext(RequestHeader header, String listenerName, String clientHost) {
        this(header, listenerName, clientHost, KafkaPrincipal.ANONYMOUS, SecurityProtocol.PLAINTEXT);
    }

    /** Whether segment bytes may go from the file to the socket without a copy (not through TLS). */
    public boolean zeroCopy() {
        return securityProtocol == SecurityProtocol.PLAINTEXT || securityProtocol == SecurityProtocol.SASL_PLAINTEXT;
    }

    public short apiVersion() {
        return header.apiVersion();
    }
}
