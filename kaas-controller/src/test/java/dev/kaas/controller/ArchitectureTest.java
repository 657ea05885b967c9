package dev.kaas.controller;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The controller's package structure as a test: one-way dependencies, no broker code. */
class ArchitectureTest {
    private static final JavaClasses CONTROLLER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.kaas.controller");

    @Test
    void controllerPackagesHaveNoCycles() {
        slices().matching("dev.kaas.controller.(*)..").should().beFreeOfCycles().check(CONTROLLER);
    }

    @Test
    void controllerDoesNotDependOnBrokerCode() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.kaas.broker..").check(CONTROLLER);
    }

    @Test
    void kubernetesTypesStayBelowThePort() {
        noClasses().that().resideOutsideOfPackage("dev.kaas.controller.kube..")
                .should().dependOnClassesThat().resideInAnyPackage("io.fabric8..")
                .because("the rest of the controller sees the Kubernetes binding only as a ClusterMetadata")
                .check(CONTROLLER);
    }
}
