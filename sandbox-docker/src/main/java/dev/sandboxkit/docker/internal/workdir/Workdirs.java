package dev.sandboxkit.docker.internal.workdir;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandboxkit.FileLimits;
import dev.sandboxkit.SandboxFiles;
import dev.sandboxkit.SandboxSpec;
import dev.sandboxkit.docker.internal.engine.EngineClient;
import dev.sandboxkit.spi.CreateRequest;
import dev.sandboxkit.spi.WorkspaceCapability;
import dev.sandboxkit.spi.SnapshotDescriptor;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where session workdirs live for the Docker driver: host directories bind-mounted at /workspace
 * ({@link HostDirWorkdirs}) or one named volume per session ({@link VolumeWorkdirs}). The driver hands every
 * workspace call of the SPI to the backend that owns the location (see {@link VolumeWorkdirs#owns}).
 */
public interface Workdirs extends AutoCloseable {

    /**
     * How a workdir is mounted at /workspace, read-write: an entry of the create body's {@code HostConfig.Mounts}.
     *
     * @param volume whether it is a named volume ({@code nocopy}: the image's /workspace never fills it), else a
     *               bind mount of a host directory
     * @param source the volume's name or the host directory
     */
    record Mount(boolean volume, String source) {
        /**
         * The Engine API's JSON for it, as docker-java sent it.
         *
         * @return {@code {"Type":..,"Source":..,"Target":"/workspace","ReadOnly":false,...}}
         */
        public ObjectNode json() {
            ObjectNode m = EngineClient.JSON.createObjectNode().put("Type", volume ? "volume" : "bind")
                    .put("Source", source).put("Target", SandboxSpec.WORKSPACE).put("ReadOnly", false);
            if (volume) {
                m.putObject("VolumeOptions").put("NoCopy", true);
            }
            return m;
        }
    }

    /**
     * The workdir capabilities this backend really has ({@link WorkspaceCapability#FILES} and the like).
     *
     * @return capabilities
     */
    Set<WorkspaceCapability> capabilities();

    /**
     * The user the container runs as, {@code uid[:gid]}.
     *
     * @param spec the session's spec
     * @return the user
     */
    String sandboxUser(SandboxSpec spec);

    /**
     * Creates the session's workdir if missing, owned by the sandbox user. Idempotent.
     *
     * @param sessionId the session
     * @param spec      its spec
     * @return the location
     */
    String create(String sessionId, SandboxSpec spec);

    /**
     * Deletes a workdir. Idempotent.
     *
     * @param location the workdir
     */
    void delete(String location);

    /**
     * Hands a pool slot's workdir to a session.
     *
     * @param location  the slot's workdir
     * @param sessionId the session
     * @return the location to record
     */
    String adopt(String location, String sessionId);

    /**
     * Makes the workdir ready for a new container (recreated if it vanished, given to the current user) and
     * says how to mount it at /workspace.
     *
     * @param request the container about to be created
     * @return the mount
     */
    Mount mount(CreateRequest request);

    /**
     * The files API.
     *
     * @param location the workdir
     * @param spec     the session's spec
     * @param limits   the limits
     * @return the files API
     */
    SandboxFiles files(String location, SandboxSpec spec, FileLimits limits);

    /**
     * Writes the workdir as a tar stream.
     *
     * @param location the workdir
     * @param spec     the session's spec
     * @param out      where it goes; not closed
     * @throws IOException if writing fails
     */
    void export(String location, SandboxSpec spec, OutputStream out) throws IOException;

    /**
     * Fills a new workdir from a tar stream.
     *
     * @param location the workdir
     * @param spec     the session's spec
     * @param in       the archive; read to its end, not closed
     */
    void importInto(String location, SandboxSpec spec, InputStream in);

    /**
     * Copies a workdir into a new snapshot.
     *
     * @param location the workdir
     * @param labels   the snapshot's labels
     * @return the snapshot
     */
    SnapshotDescriptor snapshot(String location, Map<String, String> labels);

    /**
     * Replaces a workdir's content with a snapshot's or another workdir's.
     *
     * @param source   a snapshot or workdir of this backend
     * @param location the workdir to fill
     * @param spec     its session's spec
     */
    void restore(String source, String location, SandboxSpec spec);

    /**
     * Replaces a workdir's content with a copy of a host directory.
     *
     * @param directory the template
     * @param location  the workdir
     * @param spec      its session's spec
     */
    void seed(Path directory, String location, SandboxSpec spec);

    /**
     * Snapshots whose labels include the given ones.
     *
     * @param labels selector
     * @return snapshots
     */
    List<SnapshotDescriptor> listSnapshots(Map<String, String> labels);

    /**
     * Replaces a snapshot's labels.
     *
     * @param location the snapshot
     * @param labels   its new labels
     */
    void labelSnapshot(String location, Map<String, String> labels);

    /**
     * Deletes a snapshot. Idempotent.
     *
     * @param location the snapshot
     */
    void deleteSnapshot(String location);

    /**
     * The workdirs of this backend whose labels include {@code labels} (see {@link
     * dev.sandboxkit.spi.SandboxDriver#listWorkspaces}). Default: none, a backend without labels.
     *
     * @param labels label selector
     * @return workdirs
     */
    default List<dev.sandboxkit.spi.WorkspaceDescriptor> listWorkspaces(Map<String, String> labels) {
        return List.of();
    }

    /** Periodic clean-up, on the orphan sweep's listing. Default: nothing. */
    default void sweep() {
    }

    /** Releases what this backend holds (helper containers). */
    @Override
    default void close() {
    }
}
