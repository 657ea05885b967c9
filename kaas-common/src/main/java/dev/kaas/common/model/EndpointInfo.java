package dev.kaas.common.model;

/** One listener of a broker, as clients must reach it (its advertised host and port). */
public record EndpointInfo(String listener, String host, int port, String securityProtocol) {
}
