package io.tensorlane.runtime.engine;

import io.tensorlane.contract.TerminationMessage;

/** Device memory ran out while allocating {@code phase}; carries what the termination message needs. */
public class CudaOutOfMemoryException extends RuntimeException {
    private final TerminationMessage termination;

    public CudaOutOfMemoryException(TerminationMessage termination) {
        super(termination.message());
        this.termination = termination;
    }

    public TerminationMessage termination() {
        return termination;
    }
}
