package dev.sandboxkit.docker.internal.engine;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.spi.CreateRequest;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The bodies of {@code POST /containers/create} the driver sends: the same fields docker-java sent before this
 * client carried the call (fields it left unset are absent, so the engine's defaults apply as before).
 */
public final class ContainerBody {
    /** The pids limit of a gVisor container: room for its own threads under load. */
    static final long GVISOR_PIDS_FLOOR = 16_384;

    /** The capability names docker-java 3.7 knew; others were refused before any call. */
    static final Set<String> CAPABILITIES = Set.of("ALL", "AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE",
            "BLOCK_SUSPEND", "BPF", "CHECKPOINT_RESTORE", "CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER",
            "FSETID", "IPC_LOCK", "IPC_OWNER", "KILL", "LEASE", "LINUX_IMMUTABLE", "MAC_ADMIN", "MAC_OVERRIDE",
            "MKNOD", "NET_ADMIN", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_RAW", "PERFMON", "SETFCAP", "SETGID",
            "SETPCAP", "SETUID", "SYS_ADMIN", "SYS_BOOT", "SYS_CHROOT", "SYSLOG", "SYS_MODULE", "SYS_NICE",
            "SYS_PACCT", "SYS_PTRACE", "SYS_RAWIO", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "WAKE_ALARM");

    private ContainerBody() {
    }

    /**
     * A sandbox container: {@code sleep infinity} as the entrypoint (the image's own never runs), the workdir at
     * /workspace, the spec's isolation and resources.
     *
     * @param request the container to create
     * @param mount   the workdir's entry of {@code HostConfig.Mounts}
     * @param user    the user it runs as
     * @return the body
     * @throws SandboxConfigurationException if the spec names an unknown capability
     */
    /**
     * Under gVisor the container's pids cgroup holds gVisor's own threads (the sandbox's processes are its tasks, not
     * host processes): the spec's limit would not bound the sandbox, and reaching it kills the whole sandbox (seen at
     * 50 concurrent downloads under the default 512). There it is a backstop for gVisor's threads, never below
     * {@value #GVISOR_PIDS_FLOOR}; the memory limit bounds a fork bomb inside.
     */
    static long pidsLimit(SandboxSpec spec) {
        String runtime = spec.runtime();
        boolean gvisor = runtime != null && (runtime.contains("runsc") || runtime.contains("gvisor"));
        return gvisor ? Math.max(spec.pidsLimit(), GVISOR_PIDS_FLOOR) : spec.pidsLimit();
    }

    public static ObjectNode sandbox(CreateRequest request, ObjectNode mount, String user) {
        SandboxSpec spec = request.spec();
        ObjectNode body = EngineClient.JSON.createObjectNode();
        if (!spec.network().startsWith("container:")) {
            body.put("Hostname", "sandbox"); // the engine refuses a hostname when sharing another's network
        }
        body.put("User", user);
        // No Cmd, and spec.env() deliberately not set here: the engine adds it to every exec.
        body.putArray("Entrypoint").add("sleep").add("infinity");
        body.put("Image", spec.image());
        body.put("WorkingDir", SandboxSpec.WORKSPACE);
        Map<String, String> labels = new HashMap<>(spec.labels());
        labels.putAll(request.labels());
        body.set("Labels", EngineClient.JSON.valueToTree(labels));
        ObjectNode hc = body.putObject("HostConfig");
        hc.put("Init", spec.init());
        hc.putArray("Mounts").add(mount);
        hc.put("NetworkMode", spec.network());
        hc.put("ReadonlyRootfs", spec.readOnlyRootFilesystem());
        if (spec.runtime() != null) {
            hc.put("Runtime", spec.runtime());
        }
        if (spec.dropAllCapabilities()) {
            hc.putArray("CapDrop").add("ALL");
        }
        if (!spec.addCapabilities().isEmpty()) {
            spec.addCapabilities().forEach(c -> hc.withArray("CapAdd").add(capability(c)));
        }
        if (spec.noNewPrivileges()) {
            hc.putArray("SecurityOpt").add("no-new-privileges");
        }
        if (spec.pidsLimit() > 0) {
            hc.put("PidsLimit", pidsLimit(spec));
        }
        if (spec.memoryBytes() > 0) {
            hc.put("Memory", spec.memoryBytes()).put("MemorySwap", spec.memoryBytes()); // swap = memory: no swap
        }
        if (spec.cpus() > 0) {
            hc.put("NanoCpus", Math.round(spec.cpus() * 1e9));
        }
        if (spec.tmpSizeBytes() > 0) {
            // Always sized: the engine's default tmpfs is half the host's RAM.
            hc.putObject("Tmpfs").put("/tmp", "rw,nosuid,nodev,size=" + spec.tmpSizeBytes());
        }
        return body;
    }

    /**
     * A volume's helper or one-off container: no network, every capability dropped but {@code capabilities},
     * no new privileges, 64 processes at most, working directory /.
     *
     * @param image        the image
     * @param argv         its entrypoint
     * @param user         the user it runs as
     * @param labels       its labels
     * @param mount        the volume's entry of {@code HostConfig.Mounts}
     * @param capabilities capabilities to add back ({@code CHOWN}, ...)
     * @return the body
     */
    public static ObjectNode helper(String image, List<String> argv, String user, Map<String, String> labels,
            ObjectNode mount, List<String> capabilities) {
        ObjectNode body = EngineClient.JSON.createObjectNode();
        body.put("User", user);
        body.set("Entrypoint", EngineClient.JSON.valueToTree(argv));
        body.put("Image", image);
        body.put("WorkingDir", "/");
        body.put("NetworkDisabled", true);
        body.set("Labels", EngineClient.JSON.valueToTree(labels));
        ObjectNode hc = body.putObject("HostConfig");
        hc.putArray("Mounts").add(mount);
        hc.put("NetworkMode", "none");
        hc.putArray("CapDrop").add("ALL");
        if (!capabilities.isEmpty()) {
            capabilities.forEach(c -> hc.withArray("CapAdd").add(capability(c)));
        }
        hc.putArray("SecurityOpt").add("no-new-privileges");
        hc.put("PidsLimit", 64L);
        return body;
    }

    /**
     * A capability's name as the engine takes it ({@code NET_ADMIN}; {@code cap_net_admin} is accepted too).
     *
     * @param name the name
     * @return the engine's name
     * @throws SandboxConfigurationException if it is not a known capability
     */
    public static String capability(String name) {
        String n = name.trim().toUpperCase(Locale.ROOT);
        if (n.startsWith("CAP_")) {
            n = n.substring(4);
        }
        if (!CAPABILITIES.contains(n)) {
            throw new SandboxConfigurationException("unknown Linux capability: " + name);
        }
        return n;
    }
}
