package io.tensorlane.api;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The module's packages ({@code io.tensorlane.api.v1alpha1}, {@code .modelfacts}, {@code .topology}) form no cycle. */
class PackageCyclesTest {
    @Test
    void noPackageCycles() {
        slices().matching("io.tensorlane.(**)")
                .should()
                .beFreeOfCycles()
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("io.tensorlane.api", "io.tensorlane.modelfacts", "io.tensorlane.topology"));
    }
}
