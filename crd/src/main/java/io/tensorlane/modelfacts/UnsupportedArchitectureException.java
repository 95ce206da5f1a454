package io.tensorlane.modelfacts;

/** config.json names an architecture the runtime does not serve. */
public class UnsupportedArchitectureException extends ModelFactsException {
    private final String architecture;

    public UnsupportedArchitectureException(String message, String architecture) {
        super(message);
        this.architecture = architecture;
    }

    public String architecture() {
        return architecture;
    }
}
