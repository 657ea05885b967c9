package dev.kaas.controller.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/** Watches of the controller's resources, started so that the controller never waits for one. */
final class Watches {
    private Watches() {
    }

    /**
     * Starts {@code informer} (made with {@code runnableInformer}, not {@code inform()}, which waits
     * for the first list: the controller must start, and stand by, while the API server is away).
     * It retries every failure; {@code listener}, if any, runs on every change. The periodic
     * resync covers a watch that never gets going.
     */
    static <T extends HasMetadata> SharedIndexInformer<T> start(Supplier<SharedIndexInformer<T>> make, Runnable listener) {
        return start(make, x -> true, listener);
    }

    /** As {@link #start(Supplier, Runnable)}, with {@code listener} run only on changes of objects {@code relevant} accepts. */
    static <T extends HasMetadata> SharedIndexInformer<T> start(Supplier<SharedIndexInformer<T>> make, Predicate<T> relevant,
                                                              Runnable listener) {
        SharedIndexInformer<T> informer = make.get();
        informer.exceptionHandler((started, t) -> true);
        if (listener != null) {
            informer.addEventHandler(new ResourceEventHandler<>() {
                @Override
                public void onAdd(T obj) {
                    if (relevant.test(obj)) {
                        listener.run();
                    }
                }

                @Override
                public void onUpdate(T oldObj, T newObj) {
                    if (relevant.test(newObj)) {
                        listener.run();
                    }
                }

                @Override
                public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                    if (relevant.test(obj)) {
                        listener.run();
                    }
                }
            });
        }
        informer.start();
        return informer;
    }
}
