package io.tensorlane.testkit;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The test kit's packages ({@code io.tensorlane.testkit}, {@code .hub}, {@code .sim}) form no cycle. */
class PackageCyclesTest {
    @Test
    void noPackageCycles() {
        slices().matching("io.tensorlane.(**)")
                .should()
                .beFreeOfCycles()
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("io.tensorlane.testkit"));
    }
}
