package io.tensorlane.contract;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The module's packages form no cycle (one package today; the rule is here for the next one). */
class PackageCyclesTest {
    @Test
    void noPackageCycles() {
        slices().matching("io.tensorlane.(**)")
                .should()
                .beFreeOfCycles()
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("io.tensorlane.contract"));
    }
}
