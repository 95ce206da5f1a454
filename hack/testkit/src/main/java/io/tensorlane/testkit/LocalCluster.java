package io.tensorlane.testkit;

import io.fabric8.kubernetes.api.model.ConfigBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequest;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

/**
 * How to reach a (local) Kubernetes API server: the kubeconfig file and what it contains. Produced by
 * {@link LocalControlPlane} or read from an existing kubeconfig ({@code TENSORLANE_KUBECONFIG}).
 *
 * @param kubeconfig the kubeconfig file (admin user, token auth)
 * @param masterUrl  e.g. {@code https://127.0.0.1:40123}
 * @param adminToken bearer token of a member of {@code system:masters}
 * @param caCertPem  PEM of the API server's serving certificate chain (null: not known, TLS not verified)
 */
public record LocalCluster(Path kubeconfig, String masterUrl, String adminToken, String caCertPem) {
    static final String CONTEXT = "tensorlane-local";

    /** A fresh admin client; close it when done. */
    public KubernetesClient newClient() {
        return new KubernetesClientBuilder().withConfig(config()).build();
    }

    /** The fabric8 configuration for the admin user. */
    public Config config() {
        try {
            return Config.fromKubeconfig(Files.readString(kubeconfig));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read kubeconfig " + kubeconfig, e);
        }
    }

    /**
     * A client authenticated as a ServiceAccount, with a token issued by the API server (TokenRequest API). Use it to
     * prove least-privilege RBAC: everything this client does is authorized as {@code system:serviceaccount:ns:name}.
     */
    public KubernetesClient clientAs(KubernetesClient admin, String namespace, String serviceAccount) {
        TokenRequest req = new TokenRequestBuilder()
                .withNewSpec()
                .withExpirationSeconds(3600L)
                .endSpec()
                .build();
        String token = admin.serviceAccounts()
                .inNamespace(namespace)
                .withName(serviceAccount)
                .tokenRequest(req)
                .getStatus()
                .getToken();
        Config base = config();
        Config cfg = new io.fabric8.kubernetes.client.ConfigBuilder(Config.empty())
                .withMasterUrl(masterUrl)
                .withOauthToken(token)
                .withCaCertData(base.getCaCertData())
                .withTrustCerts(base.isTrustCerts())
                .withNamespace(namespace)
                .build();
        return new KubernetesClientBuilder().withConfig(cfg).build();
    }

    /** Reads a kubeconfig (current context) written by {@link #write} or any token-based kubeconfig. */
    public static LocalCluster fromKubeconfig(Path file) {
        try {
            Config cfg = Config.fromKubeconfig(Files.readString(file));
            String ca = cfg.getCaCertData() == null
                    ? null
                    : new String(Base64.getDecoder().decode(cfg.getCaCertData()), StandardCharsets.UTF_8);
            return new LocalCluster(file.toAbsolutePath(), stripSlash(cfg.getMasterUrl()), cfg.getAutoOAuthToken(), ca);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read kubeconfig " + file, e);
        }
    }

    /** Writes a kubeconfig for {@code masterUrl}, authenticating with {@code token}, verifying the server by {@code caPem}. */
    static LocalCluster write(Path file, String masterUrl, String token, String caPem) throws IOException {
        var kubeconfig = new ConfigBuilder()
                .withApiVersion("v1")
                .withKind("Config")
                .addNewCluster()
                .withName(CONTEXT)
                .withNewCluster()
                .withServer(masterUrl)
                .withCertificateAuthorityData(
                        Base64.getEncoder().encodeToString(caPem.getBytes(StandardCharsets.UTF_8)))
                .endCluster()
                .endCluster()
                .addNewUser()
                .withName("admin")
                .withNewUser()
                .withToken(token)
                .endUser()
                .endUser()
                .addNewContext()
                .withName(CONTEXT)
                .withNewContext()
                .withCluster(CONTEXT)
                .withUser("admin")
                .withNamespace("default")
                .endContext()
                .endContext()
                .withCurrentContext(CONTEXT)
                .build();
        Files.writeString(file, Serialization.asYaml(kubeconfig));
        return new LocalCluster(file.toAbsolutePath(), masterUrl, token, caPem);
    }

    private static String stripSlash(String url) {
        return url != null && url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }
}
