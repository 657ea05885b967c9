package dev.kaas.common.model;

import java.util.List;

/** A live broker: its id and the endpoints it advertises, one per listener. */
public record BrokerInfo(int id, List<EndpointInfo> endpoints) {
    public BrokerInfo {
        endpoints = List.copyOf(endpoints);
    }
}
