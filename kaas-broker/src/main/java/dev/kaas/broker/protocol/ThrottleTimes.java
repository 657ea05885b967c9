package dev.kaas.broker.protocol;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.apache.kafka.common.protocol.ApiMessage;

/**
 * The {@code throttle_time_ms} of any response message, as Apache's
 * {@code AbstractResponse.maybeSetThrottleTimeMs}: kafka-clients' generated response classes all
 * name the field alike but share no interface for it. A message without the field is left alone.
 */
final class ThrottleTimes {
    /** The getter and setter of a response class's throttle time, or null when it has none. */
    private record Accessors(MethodHandle get, MethodHandle set) {
    }

    private static final ClassValue<Accessors> ACCESSORS = new ClassValue<>() {
        @Override
        protected Accessors computeValue(Class<?> type) {
            try {
                MethodHandles.Lookup lookup = MethodHandles.publicLookup();
                return new Accessors(lookup.findVirtual(type, "throttleTimeMs", MethodType.methodType(int.class)),
                        lookup.findVirtual(type, "setThrottleTimeMs", MethodType.methodType(type, int.class)));
            } catch (NoSuchMethodException | IllegalAccessException e) {
                return null;
            }
        }
    };

    private ThrottleTimes() {
    }

    /**
     * The message with its throttle time raised to {@code ms} when it is lower (a handler may have
     * set a longer one): a copy, because a handler may answer several requests with one message
     * (a SyncGroup's members), and one client's delay is not another's.
     */
    static ApiMessage raise(ApiMessage message, int ms) {
        if (ms <= 0) {
            return message;
        }
        Accessors a = ACCESSORS.get(message.getClass());
        if (a == null) {
            return message;
        }
        try {
            if ((int) a.get().invoke(message) >= ms) {
                return message;
            }
            ApiMessage copy = (ApiMessage) message.duplicate();
            a.set().invoke(copy, ms);
            return copy;
        } catch (Throwable e) {
            throw new IllegalStateException("cannot set the throttle time of " + message.getClass().getSimpleName(), e);
        }
    }
}
