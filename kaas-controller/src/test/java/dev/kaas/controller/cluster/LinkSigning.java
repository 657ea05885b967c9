package dev.kaas.controller.cluster;

import dev.kaas.common.cluster.LinkAuth;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.security.SecureRandom;
import java.util.function.UnaryOperator;

/** What a broker's channel does to every call (dev.kaas.broker.cluster.ControllerChannel), with a header the test may alter. */
final class LinkSigning implements ClientInterceptor {
    private final byte[] key;
    private final UnaryOperator<String> alter;
    volatile String lastHeader;

    LinkSigning(byte[] key) {
        this(key, UnaryOperator.identity());
    }

    LinkSigning(byte[] key, UnaryOperator<String> alter) {
        this.key = key;
        this.alter = alter;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
            @Override
            public void start(Listener<R> listener, Metadata headers) {
                String header = alter.apply(LinkAuth.sign(key, method.getFullMethodName(), System.currentTimeMillis(), new SecureRandom()));
                if (header != null) {
                    headers.put(LinkGuard.HEADER, header);
                }
                lastHeader = header;
                super.start(listener, headers);
            }
        };
    }
}
