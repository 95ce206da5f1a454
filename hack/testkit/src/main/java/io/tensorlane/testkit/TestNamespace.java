package io.tensorlane.testkit;

/** The namespace {@link LocalClusterExtension} created for the current test class (deleted after it). */
public record TestNamespace(String name) {
    @Override
    public String toString() {
        return name;
    }
}
