package io.tensorlane.testkit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/** Shorthand for {@code @ExtendWith(LocalClusterExtension.class)}; see {@link LocalClusterExtension}. */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(LocalClusterExtension.class)
public @interface WithLocalCluster {}
