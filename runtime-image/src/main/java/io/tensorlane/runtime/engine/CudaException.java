package io.tensorlane.runtime.engine;

import jcuda.driver.CUresult;

/** A CUDA driver call failed; carries the CUresult code. */
public class CudaException extends RuntimeException {
    private final int result;

    public CudaException(String what, int result) {
        super(what + " failed: " + CUresult.stringFor(result) + " (" + result + ")");
        this.result = result;
    }

    public int result() {
        return result;
    }

    public boolean isOutOfMemory() {
        return result == CUresult.CUDA_ERROR_OUT_OF_MEMORY;
    }
}
