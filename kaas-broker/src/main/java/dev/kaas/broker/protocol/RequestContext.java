package dev.kaas.broker.protocol;

import org.apache.kafka.common.requests.RequestHeader;

/**
 * What a handler knows about the request besides its body.
 *
 * @param listenerName the listener the connection arrived on: Metadata answers with that listener's advertised endpoints
 */
public record RequestContext(RequestHeader header, String listenerName, String clientAddress) {
    public short apiVersion() {
        return header.apiVersion();
    }
}
