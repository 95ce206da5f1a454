package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionCondition;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The committed CRDs ({@code manifests/crds}) on Kubernetes 1.36's CRD server: it is a 1.36 server, each CRD is
 * Established with its names accepted, and applying each again passes 1.36's CRD validation (structural schema,
 * defaults valid against the schema, list and map types, formats) without one warning. A copy with a non-structural
 * schema is rejected, which shows the check runs.
 */
@WithLocalCluster
@ExtendWith(CrdServers.Extension.class)
class CurrentCrdServerClusterTest {

    record Reply(int status, List<String> warnings, String body) {}

    /** A raw request with the admin token, verifying the server by the certificate its kubeconfig pins. */
    static Reply request(LocalCluster cluster, String method, String path, String contentType, String body)
            throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        int i = 0;
        for (var cert : CertificateFactory.getInstance("X.509")
                .generateCertificates(
                        new ByteArrayInputStream(cluster.caCertPem().getBytes(StandardCharsets.UTF_8)))) {
            trust.setCertificateEntry("ca" + i++, cert);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ssl = SSLContext.getInstance("TLS");
        ssl.init(null, tmf.getTrustManagers(), null);
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(cluster.masterUrl() + path))
                .header("Authorization", "Bearer " + cluster.adminToken())
                .header("Accept", "application/json");
        req = body == null
                ? req.method(method, HttpRequest.BodyPublishers.noBody())
                : req.header("Content-Type", contentType).method(method, HttpRequest.BodyPublishers.ofString(body));
        HttpClient http = HttpClient.newBuilder().sslContext(ssl).build(); // not AutoCloseable before Java 21
        HttpResponse<String> r = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), r.headers().allValues("Warning"), r.body());
    }

    static List<Path> crdFiles() {
        return CrdParityClusterTest.yamlFiles("manifests/crds");
    }

    static Reply dryRunApply(LocalCluster cluster, String name, String yaml) throws Exception {
        return request(
                cluster,
                "PATCH",
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name
                        + "?fieldManager=crd-check&force=true&dryRun=All",
                "application/apply-patch+yaml",
                yaml);
    }

    @Test
    void isKubernetes136(CrdServers servers) throws Exception {
        Reply v = request(servers.server().cluster(), "GET", "/version", null, null);
        assertThat(v.status()).isEqualTo(200);
        @SuppressWarnings("unchecked")
        Map<String, Object> version = Serialization.unmarshal(v.body(), Map.class);
        assertThat(version).containsEntry("major", "1").containsEntry("minor", "36");
        assertThat(servers.server().version()).startsWith("golang-k8s-apiextensions-apiserver-dev 0.36.");
    }

    @Test
    void committedCrdsAreEstablishedAndPassTheChecksOf136WithoutWarnings(CrdServers servers) throws Exception {
        assertThat(crdFiles()).hasSize(2);
        for (Path file : crdFiles()) {
            CustomResourceDefinition crd =
                    Serialization.unmarshal(Files.readString(file), CustomResourceDefinition.class);
            String name = crd.getMetadata().getName();
            for (CrdServers.Server server : servers.both()) {
                CustomResourceDefinition stored = server.client()
                        .apiextensions()
                        .v1()
                        .customResourceDefinitions()
                        .withName(name)
                        .get();
                Map<String, String> conditions = stored.getStatus().getConditions().stream()
                        .collect(Collectors.toMap(
                                CustomResourceDefinitionCondition::getType,
                                CustomResourceDefinitionCondition::getStatus));
                assertThat(conditions)
                        .as(server.name() + " " + name)
                        .containsEntry("Established", "True")
                        .containsEntry("NamesAccepted", "True")
                        .doesNotContainKey("NonStructuralSchema");
                assertThat(stored.getStatus().getAcceptedNames().getKind())
                        .isEqualTo(crd.getSpec().getNames().getKind());
            }
            Reply r = dryRunApply(servers.server().cluster(), name, Files.readString(file));
            assertThat(r.status()).as(name + ": " + r.body()).isEqualTo(200);
            assertThat(r.warnings()).as(name + " warnings on 1.36").isEmpty();
        }
    }

    /** The negative control: the same CRD with one property that has no type is not structural, and 1.36 says so. */
    @Test
    void aNonStructuralCopyIsRejected(CrdServers servers) throws Exception {
        Path file = crdFiles().stream()
                .filter(p -> p.getFileName().toString().startsWith("inferencedeployments"))
                .findFirst()
                .orElseThrow();
        CustomResourceDefinition crd = Serialization.unmarshal(Files.readString(file), CustomResourceDefinition.class);
        var replicas = crd.getSpec()
                .getVersions()
                .get(0)
                .getSchema()
                .getOpenAPIV3Schema()
                .getProperties()
                .get("spec")
                .getProperties()
                .get("replicas");
        replicas.setType(null);
        Reply r = dryRunApply(servers.server().cluster(), crd.getMetadata().getName(), Serialization.asYaml(crd));
        assertThat(r.status()).as(r.body()).isEqualTo(422);
        assertThat(r.body())
                .contains("openAPIV3Schema.properties[spec].properties[replicas].type")
                .contains("must not be empty for specified object fields");
    }

    /**
     * Why our CRDs carry no CEL rule ({@code x-kubernetes-validations}) such as "parallelism.tensor divides
     * model.geometry.attentionHeads when geometry is given", though 1.36 could enforce one: a 1.20 server refuses a
     * server-side apply of such a CRD (its CRD type has no such field; the testkit, {@code kubectl apply
     * --server-side} and GitOps tools apply CRDs that way), so the rule stays in the operator's validator. The day
     * 1.20 is dropped, this test says so by failing its first assertion's premise.
     */
    @Test
    void aCelRuleWouldBreakServerSideApplyOfTheCrdOn120(CrdServers servers) throws Exception {
        Path file = crdFiles().stream()
                .filter(p -> p.getFileName().toString().startsWith("inferencedeployments"))
                .findFirst()
                .orElseThrow();
        String committed = Files.readString(file);
        assertThat(committed).doesNotContain("x-kubernetes-validations");
        CustomResourceDefinition crd = Serialization.unmarshal(committed, CustomResourceDefinition.class);
        var rule = new io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule();
        rule.setRule("!has(self.model.geometry) || self.model.geometry.attentionHeads % self.parallelism.tensor == 0");
        rule.setMessage("parallelism.tensor must divide model.geometry.attentionHeads");
        crd.getSpec()
                .getVersions()
                .get(0)
                .getSchema()
                .getOpenAPIV3Schema()
                .getProperties()
                .get("spec")
                .setXKubernetesValidations(List.of(rule));
        String withRule = Serialization.asYaml(crd);
        String name = crd.getMetadata().getName();

        Reply current = dryRunApply(servers.server().cluster(), name, withRule);
        assertThat(current.status())
                .as("1.36 takes the rule: " + current.body())
                .isEqualTo(200);
        assertThat(current.body()).contains("x-kubernetes-validations");
        assertThat(current.warnings()).isEmpty();

        Reply legacy = dryRunApply(SharedCluster.get().cluster(), name, withRule);
        assertThat(legacy.status()).as("1.20: " + legacy.body()).isEqualTo(500);
        assertThat(legacy.body()).contains("x-kubernetes-validations: field not declared in schema");
    }
}
