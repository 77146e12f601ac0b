package dev.sandboxkit.docker.internal.compute;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandboxkit.PullPolicy;
import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.docker.internal.engine.EngineControl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The images sandboxes are created from: present (inspected once, then remembered) or pulled as the spec's policy
 * allows, with the credentials the Docker CLI's {@code config.json} holds for the registry ({@code auths}, as
 * docker-java read them). Thread-safe.
 */
final class DockerImages {
    private static final Logger log = LoggerFactory.getLogger(DockerImages.class);
    /** What docker-java took for a finished pull, in the last progress message's status. */
    private static final List<String> PULLED = List.of("Download complete", "Image is up to date",
            "Downloaded newer image", "this image was pulled from a legacy registry", "downloaded");
    private static final String DEFAULT_REGISTRY = "https://index.docker.io/v1/";

    private final EngineControl engine;
    private final Duration pullTimeout;
    private final Path dockerConfig;
    /** Images seen present, so create skips the inspect; dropped when the engine says otherwise. */
    private final Set<String> known = ConcurrentHashMap.newKeySet();

    DockerImages(EngineControl engine, Duration pullTimeout, Path dockerConfig) {
        this.engine = engine;
        this.pullTimeout = pullTimeout;
        this.dockerConfig = dockerConfig;
    }

    /** Forgets an image the engine no longer has. */
    void forget(String image) {
        known.remove(image);
    }

    /** Makes sure the image is present, pulling it if the policy allows. */
    void ensure(SandboxSpec spec) {
        String image = spec.image();
        PullPolicy policy = spec.pullPolicy();
        if (policy != PullPolicy.ALWAYS && known.contains(image)) {
            return;
        }
        if (policy != PullPolicy.ALWAYS) {
            EngineClient.Response r = engine.call("GET", "/images/" + imagePath(image) + "/json", null);
            if (r.status() == 200) {
                known.add(image);
                return;
            }
            if (r.status() != 404) {
                throw new SandboxAcquireException("cannot inspect image " + image + ": " + r.message());
            }
            if (policy == PullPolicy.NEVER) {
                throw missing(spec, r.message());
            }
        }
        pull(image);
        known.add(image);
    }

    static SandboxAcquireException missing(SandboxSpec spec, String message) {
        if (spec.pullPolicy() == PullPolicy.NEVER) {
            return new SandboxAcquireException("image " + spec.image()
                    + " is not present locally and the pull policy is NEVER");
        }
        return new SandboxAcquireException("image " + spec.image() + " is not present locally: " + message);
    }

    /** An image reference as a path segment: its '/' and ':' kept (the engine's route takes them), the rest encoded. */
    static String imagePath(String image) {
        return image.matches("[A-Za-z0-9._/:@-]+") ? image : EngineClient.segment(image);
    }

    private void pull(String image) {
        String repository = image;
        String tag = "latest"; // without a tag the engine would pull every tag
        int at = image.indexOf('@');
        if (at >= 0) {
            repository = image.substring(0, at);
            tag = image.substring(at + 1);
        } else {
            int colon = image.lastIndexOf(':');
            if (colon > image.lastIndexOf('/')) {
                repository = image.substring(0, colon);
                tag = image.substring(colon + 1);
            }
        }
        log.info("Pulling image {}", image);
        long endBy = System.nanoTime() + pullTimeout.toNanos();
        String path = "/images/create?fromImage=" + URLEncoder.encode(repository, StandardCharsets.UTF_8) + "&tag="
                + URLEncoder.encode(tag, StandardCharsets.UTF_8);
        EngineClient.Streamed answer;
        try {
            answer = engine.client().stream("POST", path, auth(repository), pullTimeout.toNanos(), endBy);
        } catch (SocketTimeoutException e) {
            throw timedOut(image);
        } catch (IOException e) {
            throw engine.failure(e);
        }
        if (answer.error() != null) {
            throw new SandboxAcquireException("cannot pull image " + image + ": " + answer.error().message());
        }
        JsonNode last = null;
        try (InputStream progress = answer.body();
             MappingIterator<JsonNode> items = EngineClient.JSON.readerFor(JsonNode.class).readValues(progress)) {
            while (items.hasNextValue()) {
                last = items.nextValue();
            }
        } catch (SocketTimeoutException e) {
            throw timedOut(image);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new SandboxAcquireException("cannot pull image " + image + ": unreadable progress: "
                    + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw engine.failure(e);
        }
        if (!pulled(last)) {
            String why = last == null ? "" : ": " + (last.hasNonNull("error") ? last.path("error").asText()
                    : last.path("status").asText());
            throw new SandboxAcquireException("cannot pull image " + image + ": Could not pull image" + why);
        }
    }

    private SandboxAcquireException timedOut(String image) {
        return new SandboxAcquireException("pulling image " + image + " timed out after " + pullTimeout, null, true);
    }

    private static boolean pulled(JsonNode last) {
        if (last == null || last.hasNonNull("error") || last.hasNonNull("errorDetail")
                || !last.path("status").isTextual()) {
            return false;
        }
        String status = last.path("status").asText();
        return PULLED.stream().anyMatch(status::contains);
    }

    /** {@code X-Registry-Auth} for the repository's registry, if {@code config.json} has credentials for it. */
    private List<String> auth(String repository) {
        Path file = dockerConfig.resolve("config.json");
        if (!Files.isRegularFile(file)) {
            return List.of();
        }
        String registry = registry(repository);
        try {
            JsonNode auths = EngineClient.JSON.readTree(Files.readAllBytes(file)).path("auths");
            JsonNode entry = auths.get(registry);
            if (entry == null) {
                for (var it = auths.fields(); it.hasNext() && entry == null; ) {
                    var e = it.next();
                    if (hostname(e.getKey()).equals(hostname(registry))) {
                        entry = e.getValue();
                    }
                }
            }
            if (entry == null || !entry.isObject()) {
                return List.of();
            }
            ObjectNode config = ((ObjectNode) entry).deepCopy();
            String encoded = entry.path("auth").asText("");
            if (!encoded.isEmpty()) {
                String pair = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
                int colon = pair.indexOf(':');
                if (colon > 0) {
                    config.put("username", pair.substring(0, colon)).put("password", pair.substring(colon + 1));
                }
            }
            config.put("serveraddress", registry);
            return List.of("X-Registry-Auth: " + Base64.getUrlEncoder().encodeToString(
                    EngineClient.JSON.writeValueAsBytes(config)));
        } catch (IOException | IllegalArgumentException e) {
            log.warn("Ignoring unreadable Docker config {}: {}", file, e.toString());
            return List.of();
        }
    }

    /** The registry a repository is pulled from: its first component if that names a host, else Docker Hub. */
    static String registry(String repository) {
        int slash = repository.indexOf('/');
        if (slash < 0) {
            return DEFAULT_REGISTRY;
        }
        String first = repository.substring(0, slash);
        return first.contains(".") || first.contains(":") || first.equals("localhost") ? first : DEFAULT_REGISTRY;
    }

    private static String hostname(String address) {
        String h = address.replaceFirst("^https?://", "");
        int slash = h.indexOf('/');
        return slash >= 0 ? h.substring(0, slash) : h;
    }
}
