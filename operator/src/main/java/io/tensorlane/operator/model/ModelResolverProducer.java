package io.tensorlane.operator.model;

import io.tensorlane.operator.ConfigProblems;
import io.tensorlane.operator.TensorlaneConfig;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * CDI producer of the operator's one {@link ModelResolver}, built from the configuration after {@link ConfigProblems}
 * has checked it. Here rather than beside {@link TensorlaneConfig}: the configuration's package sits below every
 * package that reads it, this one included (operator/README.md, "Package structure").
 */
@Singleton
public class ModelResolverProducer {
    @Produces
    @Singleton
    ModelResolver modelResolver(TensorlaneConfig config) {
        ConfigProblems.require(config);
        return ModelResolvers.create(config);
    }
}
