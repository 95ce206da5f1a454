package io.tensorlane.operator;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The operator's packages form no cycle, and each uses only the packages below it (operator/README.md, "Package
 * structure"). Reads the compiled production classes (not the tests); a constant inlined by javac is not a
 * dependency the class files show, so the rule checks what runs.
 */
class PackageCyclesTest {
    private static final String BASE = "io.tensorlane.operator";

    /**
     * Bottom to top; a package may use the packages of lower rows only (none of its own row). Keep in step with the
     * README's table.
     */
    static final List<List<String>> LAYERS = List.of(
            List.of("plan", "support"),
            List.of("engine", "config"),
            List.of("render"),
            List.of("model"),
            List.of("status"),
            List.of("rollback", "topology", "preflight"),
            List.of("reconcile"));

    private static JavaClasses classes;

    @BeforeAll
    static void load() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(BASE);
    }

    @Test
    void noPackageCycles() {
        slices().matching("io.tensorlane.(**)").should().beFreeOfCycles().check(classes);
    }

    @Test
    void eachPackageUsesOnlyThePackagesBelowIt() {
        LayeredArchitecture rule = layeredArchitecture().consideringOnlyDependenciesInLayers();
        for (List<String> row : LAYERS) {
            for (String name : row) {
                rule = rule.layer(name).definedBy(pkg(name));
            }
        }
        for (int i = 0; i < LAYERS.size(); i++) {
            List<String> above = new ArrayList<>();
            LAYERS.subList(i + 1, LAYERS.size()).forEach(above::addAll);
            for (String name : LAYERS.get(i)) {
                rule = above.isEmpty()
                        ? rule.whereLayer(name).mayNotBeAccessedByAnyLayer()
                        : rule.whereLayer(name).mayOnlyBeAccessedByLayers(above.toArray(String[]::new));
            }
        }
        rule.check(classes);
    }

    /** The package of a layer: {@code config} is the root package ({@link TensorlaneConfig}, {@link ConfigProblems}). */
    private static String pkg(String layer) {
        return layer.equals("config") ? BASE : BASE + "." + layer;
    }
}
