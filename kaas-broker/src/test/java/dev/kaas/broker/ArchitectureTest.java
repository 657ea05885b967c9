package dev.kaas.broker;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.kaas.broker.cluster.ClusterView;
import dev.kaas.common.model.Assignment;
import org.junit.jupiter.api.Test;

/**
 * The package structure as a test: packages by bounded context with one-way dependencies, and a
 * broker that knows nothing of the controller's code or of Kubernetes (it talks to the controller
 * over gRPC only; see src/docs/architecture.md).
 */
class ArchitectureTest {
    private static final JavaClasses BROKER = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.kaas.broker");

    @Test
    void brokerPackagesHaveNoCycles() {
        slices().matching("dev.kaas.broker.(*)..").should().beFreeOfCycles().check(BROKER);
    }

    @Test
    void brokerDependsOnNeitherControllerNorKubernetesTypes() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.kaas.controller..", "io.fabric8..")
                .because("brokers never call the Kubernetes API and reach the controller only over gRPC")
                .check(BROKER);
    }

    @Test
    void onlyTheAssignmentApplierPublishesAssignments() {
        noClasses().that().resideOutsideOfPackage("dev.kaas.broker.assignment..")
                .should().callMethod(ClusterView.class, "applied", Assignment.class)
                .because("the view may show an assignment only once its partitions are open or closed")
                .check(BROKER);
    }
}
