package io.tensorlane.runtime.engine;

/** No usable CUDA driver or device: an expected condition on machines without a GPU (one line, no stack trace). */
public class CudaUnavailableException extends RuntimeException {
    public CudaUnavailableException(String message) {
        super(message);
    }
}
