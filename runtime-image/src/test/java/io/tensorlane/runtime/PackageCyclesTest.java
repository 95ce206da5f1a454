package io.tensorlane.runtime;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The runtime's packages ({@code io.tensorlane.runtime.cli}, {@code .serve}, {@code .serve.http}, {@code .sched},
 * {@code .llm}, ...) form no cycle (runtime-image/README.md, "Package structure"). Reads the compiled production classes
 * (not the tests); a constant inlined by javac is not a dependency the class files show, so the rule checks what runs.
 */
class PackageCyclesTest {
    @Test
    void noPackageCycles() {
        slices().matching("io.tensorlane.runtime.(**)")
                .should()
                .beFreeOfCycles()
                .check(new ClassFileImporter()
                        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("io.tensorlane.runtime"));
    }
}
