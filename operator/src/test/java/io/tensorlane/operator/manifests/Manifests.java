package io.tensorlane.operator.manifests;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tensorlane.testkit.RepoRoot;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;

/** Test support for the manifests/ tree: kustomize builds, parsing with fabric8, the pom's image properties. */
final class Manifests {
    static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private Manifests() {}

    static Path repo() {
        return RepoRoot.require();
    }

    /** Output of a finished process. */
    record Result(int exit, String stdout, String stderr) {
        Result requireSuccess(String what) {
            if (exit != 0) {
                throw new AssertionError(what + " failed (exit " + exit + "):\n" + stderr + stdout);
            }
            return this;
        }
    }

    /** Runs a command in the repository root with an optional stdin text; fails after the timeout. */
    static Result run(List<String> command, String stdin, long timeoutSeconds) {
        return run(command, stdin, timeoutSeconds, Map.of());
    }

    /** As {@link #run(List, String, long)}, with extra environment variables (e.g. KUBECONFIG). */
    static Result run(List<String> command, String stdin, long timeoutSeconds, Map<String, String> env) {
        try {
            Path out = Files.createTempFile("tl-out", ".txt");
            Path err = Files.createTempFile("tl-err", ".txt");
            try {
                ProcessBuilder pb = new ProcessBuilder(command)
                        .directory(repo().toFile())
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile());
                pb.environment().putAll(env);
                Process p = pb.start();
                if (stdin != null) {
                    p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
                }
                p.getOutputStream().close();
                if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    throw new AssertionError(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
                }
                return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot run " + String.join(" ", command) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** `kubectl kustomize <dir>` (the machine's kubectl, kustomize v5), as YAML text. */
    static String kustomizeYaml(String dir) {
        return run(List.of("kubectl", "kustomize", dir), null, 120)
                .requireSuccess("kubectl kustomize " + dir)
                .stdout();
    }

    /** `kubectl <args>` against the cluster of the given kubeconfig; fails on a non-zero exit. */
    static String kubectl(java.nio.file.Path kubeconfig, String... args) {
        List<String> cmd = new ArrayList<>(List.of("kubectl"));
        cmd.addAll(List.of(args));
        return run(cmd, null, 180, Map.of("KUBECONFIG", kubeconfig.toString()))
                .requireSuccess(String.join(" ", cmd))
                .stdout();
    }

    /** `kubectl kustomize <dir>`, parsed with fabric8 (typed where fabric8 knows the kind, generic otherwise). */
    static List<HasMetadata> kustomize(String dir) {
        return parse(kustomizeYaml(dir));
    }

    /** Parses a (multi-document) YAML text into resources. */
    static List<HasMetadata> parse(String yaml) {
        Object parsed = SERIALIZATION.unmarshal(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)));
        List<HasMetadata> out = new ArrayList<>();
        if (parsed instanceof List<?> list) {
            for (Object o : list) {
                if (o instanceof HasMetadata h) {
                    out.add(h);
                }
            }
        } else if (parsed instanceof HasMetadata h) {
            out.add(h);
        } else if (parsed != null && !(parsed instanceof KubernetesResource)) {
            throw new AssertionError("not Kubernetes objects: " + parsed.getClass());
        }
        return out;
    }

    static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type, String name) {
        List<T> found = objects.stream()
                .filter(type::isInstance)
                .map(type::cast)
                .filter(o -> name.equals(o.getMetadata().getName()))
                .collect(Collectors.toList());
        if (found.size() != 1) {
            throw new AssertionError("expected one " + type.getSimpleName() + " " + name + ", found " + found.size());
        }
        return found.get(0);
    }

    static <T extends HasMetadata> List<T> all(List<HasMetadata> objects, Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
    }

    /** A property of the parent pom (the one place image names and tags are set). */
    static String pomProperty(String name) {
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setNamespaceAware(false);
            Document doc =
                    f.newDocumentBuilder().parse(repo().resolve("pom.xml").toFile());
            var props = doc.getElementsByTagName("properties").item(0).getChildNodes();
            for (int i = 0; i < props.getLength(); i++) {
                if (name.equals(props.item(i).getNodeName())) {
                    return props.item(i).getTextContent().trim();
                }
            }
            throw new AssertionError("parent pom has no property " + name);
        } catch (Exception e) {
            throw new AssertionError("cannot read the parent pom: " + e.getMessage(), e);
        }
    }

    /** A YAML file of the repository as plain maps and lists. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> yamlFile(String relPath) {
        try (var in = Files.newInputStream(repo().resolve(relPath))) {
            return SERIALIZATION.unmarshal(in, Map.class);
        } catch (IOException e) {
            throw new AssertionError("cannot read " + relPath + ": " + e.getMessage(), e);
        }
    }

    static List<Path> files(String relDir, String suffix) {
        try (Stream<Path> s = Files.list(repo().resolve(relDir))) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix))
                    .sorted()
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new AssertionError("cannot list " + relDir, e);
        }
    }

    static Optional<String> which(String binary) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path p = Path.of(dir, binary);
            if (Files.isExecutable(p)) {
                return Optional.of(p.toString());
            }
        }
        return Optional.empty();
    }
}
