package dev.kaas.broker.protocol;

import org.apache.kafka.common.requests.RequestHeader;

/**
 * What a handler knows about the request besides its body.
 *
 * @param listenerName the listener the connection arrived on: Metadata answers with that listener's advertised endpoints
 * @param clientHost the peer address as Apache reports it to group tools ({@code /127.0.0.1})
 */
public record RequestContext(RequestHeader header, String listenerName, String clientHost) {
    public short apiVersion() {
        return header.apiVersion();
    }
}
