package dev.sandboxkit.spi;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;

import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A workspace backend in memory, for tests of the SPI's plumbing: workdirs are maps of path to bytes, with a files API
 * that reads and writes whole files (nothing else), and snapshots that copy the map.
 */
class InMemoryWorkspaces implements WorkspaceBackend {
    final Map<String, Map<String, byte[]>> workdirs = new ConcurrentHashMap<>();
    private final Map<String, SnapshotDescriptor> snapshots = new ConcurrentHashMap<>();
    private final Map<String, Map<String, byte[]>> snapshotContent = new ConcurrentHashMap<>();
    private final Set<WorkspaceCapability> capabilities;
    final AtomicInteger snapshotCalls = new AtomicInteger();

    InMemoryWorkspaces(Set<WorkspaceCapability> capabilities) {
        this.capabilities = Set.copyOf(capabilities);
    }

    @Override
    public String name() {
        return "memory";
    }

    @Override
    public Set<WorkspaceCapability> workspaceCapabilities() {
        return capabilities;
    }

    @Override
    public String createWorkspace(String sessionId, SandboxSpec spec) {
        String location = "mem:" + sessionId;
        workdirs.computeIfAbsent(location, k -> new ConcurrentHashMap<>());
        return location;
    }

    @Override
    public void deleteWorkspace(String workspace) {
        workdirs.remove(workspace);
    }

    @Override
    public SandboxFiles files(String workspace, SandboxSpec spec, FileLimits limits) {
        Map<String, byte[]> content = workdirs.get(workspace);
        return (SandboxFiles) Proxy.newProxyInstance(SandboxFiles.class.getClassLoader(),
                new Class<?>[]{SandboxFiles.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "readBytes" -> content.get((String) args[0]).clone();
                    case "write" -> {
                        content.put((String) args[0], ((byte[]) args[1]).clone());
                        yield null;
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Override
    public SnapshotDescriptor snapshotWorkspace(String workspace, Map<String, String> labels) {
        String location = "snap:" + snapshotCalls.incrementAndGet();
        snapshotContent.put(location, new HashMap<>(workdirs.get(workspace)));
        SnapshotDescriptor d = new SnapshotDescriptor(location, labels, Instant.now(), 0);
        snapshots.put(location, d);
        return d;
    }

    @Override
    public void restoreWorkspace(String source, String workspace, SandboxSpec spec) {
        Map<String, byte[]> target = workdirs.get(workspace);
        target.clear();
        target.putAll(snapshotContent.get(source));
    }

    @Override
    public List<SnapshotDescriptor> listSnapshots(Map<String, String> labels) {
        return snapshots.values().stream().filter(d -> d.labels().entrySet().containsAll(labels.entrySet())).toList();
    }

    @Override
    public void labelSnapshot(String location, Map<String, String> labels) {
        SnapshotDescriptor d = snapshots.get(location);
        snapshots.put(location, new SnapshotDescriptor(location, labels, d.createdAt(), d.sizeBytes()));
    }

    @Override
    public void deleteSnapshot(String location) {
        snapshots.remove(location);
        snapshotContent.remove(location);
    }
}
