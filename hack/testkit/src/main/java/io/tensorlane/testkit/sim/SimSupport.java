package io.tensorlane.testkit.sim;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Small helpers of the simulator: informer handlers from lambdas, retry on 409. */
final class SimSupport {
    private SimSupport() {}

    static <T> ResourceEventHandler<T> handler(Consumer<T> upsert, Consumer<T> gone) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                upsert.accept(obj);
            }

            @Override
            public void onUpdate(T oldObj, T newObj) {
                upsert.accept(newObj);
            }

            @Override
            public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                gone.accept(obj);
            }
        };
    }

    static <T> T retryOnConflict(Supplier<T> write) {
        for (int attempt = 1; ; attempt++) {
            try {
                return write.get();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt >= 10) {
                    throw e;
                }
            }
        }
    }
}
