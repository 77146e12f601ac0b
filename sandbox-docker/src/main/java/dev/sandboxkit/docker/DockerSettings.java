package dev.sandboxkit.docker;

import dev.sandboxkit.SandboxConfig;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.docker.internal.files.HostWorkspaces;
import dev.sandboxkit.docker.internal.settings.DockerSettingKeys;
import dev.sandboxkit.spi.ConfigValues;
import dev.sandboxkit.spi.SettingKey;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The Docker driver's settings, typed, with their defaults written here once (in {@link Builder}). The driver reads
 * them from its {@code docker.*} keys, which every entry point feeds: {@code driverProperty(..)}, {@link SandboxConfig},
 * {@code -Dsandboxkit.docker.*}, the Spring Boot starter. {@link #keys()} lists the keys with their types, defaults
 * and descriptions. Values use {@link ConfigValues}' syntax ({@code 30s}, {@code 10m}). An unknown {@code docker.*}
 * key, or a value of the wrong type, fails the manager's {@code build()} with a
 * {@link SandboxConfigurationException} naming the key as it was set.
 *
 * <p>From code, build the settings and hand over their keys:
 * <pre>{@code
 * DockerSettings docker = DockerSettings.builder()
 *         .workdirs(DockerSettings.Workdirs.VOLUME)
 *         .pullTimeout(Duration.ofMinutes(30))
 *         .build();
 * SandboxManager.Builder builder = SandboxManager.builder();
 * docker.toProperties().forEach(builder::driverProperty);   // or config::set on a SandboxConfig
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class DockerSettings {
    private static final String PREFIX = "docker.";
    static final String DEFAULT_USER_KEY = PREFIX + "defaultUser";
    static final String PULL_TIMEOUT_KEY = PREFIX + "pullTimeout";
    static final String WORKDIRS_KEY = PREFIX + "workdirs";
    static final String CHANNEL_IDLE_TIMEOUT_KEY = PREFIX + "channelIdleTimeout";

    /** Where the driver puts a new session's workdir. */
    public enum Workdirs {
        /** A host directory {@code <workspaceRoot>/<sessionId>} bind-mounted at {@code /workspace}: a local engine only. */
        HOST,
        /**
         * One named volume per session: no host path, so a remote engine is accepted; the files API, archives,
         * snapshots and templates go through the engine's archive API.
         */
        VOLUME
    }

    private final String host;
    private final Boolean tlsVerify;
    private final Path certPath;
    private final Path tlsCaCert;
    private final Path tlsCert;
    private final Path tlsKey;
    private final String defaultUser;
    private final Duration pullTimeout;
    private final Workdirs workdirs;
    private final boolean channelSetsid;
    private final Duration channelIdleTimeout;

    private DockerSettings(Builder b) {
        this.host = b.host;
        this.tlsVerify = b.tlsVerify;
        this.certPath = b.certPath;
        this.tlsCaCert = b.tlsCaCert;
        this.tlsCert = b.tlsCert;
        this.tlsKey = b.tlsKey;
        this.defaultUser = b.defaultUser;
        this.pullTimeout = b.pullTimeout;
        this.workdirs = b.workdirs;
        this.channelSetsid = b.channelSetsid;
        this.channelIdleTimeout = b.channelIdleTimeout;
    }

    /**
     * A builder with every default.
     *
     * @return the builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Every key of the Docker driver, in order, with its type, default and description: what the docs' table and
     * the entry points' metadata are made from.
     *
     * @return the keys
     */
    public static List<SettingKey> keys() {
        return DockerSettingKeys.keys();
    }

    /**
     * The settings that differ from the defaults, as keys and text that the driver reads back: hand them to {@code SandboxManager.Builder#driverProperty} or {@link SandboxConfig#set}.
     *
     * @return {@code docker.*} key to value, in the order of {@link #keys()}
     */
    public Map<String, String> toProperties() {
        return DockerSettingKeys.properties(this);
    }

    /**
     * {@code docker.host}: the engine address.
     *
     * @return {@code unix:///path} or {@code tcp://host:port}; empty to use {@code DOCKER_HOST}, else the current
     *         Docker context, else the first local Docker or Podman socket that answers a ping
     */
    public Optional<String> host() {
        return Optional.ofNullable(host);
    }

    /**
     * {@code docker.tlsVerify}: whether a {@code tcp://} engine is a TLS one (whose certificate is always verified).
     *
     * @return the setting; empty to follow {@code DOCKER_TLS_VERIFY}
     */
    public Optional<Boolean> tlsVerify() {
        return Optional.ofNullable(tlsVerify);
    }

    /**
     * {@code docker.certPath}: the directory with {@code ca.pem}, {@code cert.pem} and {@code key.pem}.
     *
     * @return the directory; empty for {@code DOCKER_CERT_PATH}, else the Docker configuration directory
     */
    public Optional<Path> certPath() {
        return Optional.ofNullable(certPath);
    }

    /**
     * {@code docker.tlsCaCert}: the CA file the engine's certificate is verified with.
     *
     * @return the file; empty for {@code ca.pem} in the certificate directory
     */
    public Optional<Path> tlsCaCert() {
        return Optional.ofNullable(tlsCaCert);
    }

    /**
     * {@code docker.tlsCert}: the client certificate file.
     *
     * @return the file; empty for {@code cert.pem} in the certificate directory
     */
    public Optional<Path> tlsCert() {
        return Optional.ofNullable(tlsCert);
    }

    /**
     * {@code docker.tlsKey}: the client key file.
     *
     * @return the file; empty for {@code key.pem} in the certificate directory
     */
    public Optional<Path> tlsKey() {
        return Optional.ofNullable(tlsKey);
    }

    /**
     * {@code docker.defaultUser}: the sandbox user of a root JVM when the spec names none (a non-root JVM runs
     * sandboxes as itself).
     *
     * @return {@code uid:gid}; default {@code 10001:10001}
     */
    public String defaultUser() {
        return defaultUser;
    }

    /**
     * {@code docker.pullTimeout}: how long an image pull may take.
     *
     * @return a positive duration; default 10 minutes
     */
    public Duration pullTimeout() {
        return pullTimeout;
    }

    /**
     * {@code docker.workdirs}: where a new session's workdir lives.
     *
     * @return default {@link Workdirs#HOST}
     */
    public Workdirs workdirs() {
        return workdirs;
    }

    /**
     * {@code docker.channelSetsid}: whether each command-channel command gets a session of its own.
     *
     * @return default {@code true}
     */
    public boolean channelSetsid() {
        return channelSetsid;
    }

    /**
     * {@code docker.channelIdleTimeout}: a command channel idle for longer is closed.
     *
     * @return zero for never; default 5 minutes
     */
    public Duration channelIdleTimeout() {
        return channelIdleTimeout;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DockerSettings other && Objects.equals(host, other.host)
                && Objects.equals(tlsVerify, other.tlsVerify) && Objects.equals(certPath, other.certPath)
                && Objects.equals(tlsCaCert, other.tlsCaCert) && Objects.equals(tlsCert, other.tlsCert)
                && Objects.equals(tlsKey, other.tlsKey) && defaultUser.equals(other.defaultUser)
                && pullTimeout.equals(other.pullTimeout) && workdirs == other.workdirs
                && channelSetsid == other.channelSetsid && channelIdleTimeout.equals(other.channelIdleTimeout);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, tlsVerify, certPath, tlsCaCert, tlsCert, tlsKey, defaultUser, pullTimeout, workdirs,
                channelSetsid, channelIdleTimeout);
    }

    /** @return the settings that differ from the defaults, for example {@code DockerSettings{docker.workdirs=volume}} */
    @Override
    public String toString() {
        return "DockerSettings" + toProperties();
    }

    /** Builds {@link DockerSettings}; every option starts at its default. Not thread-safe. */
    public static final class Builder {
        private String host;
        private Boolean tlsVerify;
        private Path certPath;
        private Path tlsCaCert;
        private Path tlsCert;
        private Path tlsKey;
        private String defaultUser = "10001:10001";
        private Duration pullTimeout = Duration.ofMinutes(10);
        private Workdirs workdirs = Workdirs.HOST;
        private boolean channelSetsid = true;
        private Duration channelIdleTimeout = Duration.ofMinutes(5);

        private Builder() {
        }

        /**
         * {@code docker.host}: the engine address. Plain TCP is accepted on loopback only; an engine on another
         * machine needs {@link Workdirs#VOLUME}.
         *
         * @param address {@code unix:///path} or {@code tcp://host:port}, or {@code null} to discover it
         * @return this builder
         */
        public Builder host(String address) {
            this.host = address == null || address.isBlank() ? null : address.trim();
            return this;
        }

        /**
         * {@code docker.tlsVerify}: makes a {@code tcp://} engine a TLS one ({@code true}) or a plain one
         * ({@code false}), whatever {@code DOCKER_TLS_VERIFY} says.
         *
         * @param verify whether to use TLS
         * @return this builder
         */
        public Builder tlsVerify(boolean verify) {
            this.tlsVerify = verify;
            return this;
        }

        /**
         * {@code docker.certPath}: the directory with {@code ca.pem}, {@code cert.pem} and {@code key.pem}.
         *
         * @param directory the directory
         * @return this builder
         */
        public Builder certPath(Path directory) {
            this.certPath = Objects.requireNonNull(directory, "directory");
            return this;
        }

        /**
         * {@code docker.tlsCaCert}: the CA file, instead of {@code ca.pem} in the certificate directory.
         *
         * @param file the PEM file
         * @return this builder
         */
        public Builder tlsCaCert(Path file) {
            this.tlsCaCert = Objects.requireNonNull(file, "file");
            return this;
        }

        /**
         * {@code docker.tlsCert}: the client certificate, instead of {@code cert.pem} in the certificate directory.
         *
         * @param file the PEM file
         * @return this builder
         */
        public Builder tlsCert(Path file) {
            this.tlsCert = Objects.requireNonNull(file, "file");
            return this;
        }

        /**
         * {@code docker.tlsKey}: the client key, instead of {@code key.pem} in the certificate directory.
         *
         * @param file the PEM file
         * @return this builder
         */
        public Builder tlsKey(Path file) {
            this.tlsKey = Objects.requireNonNull(file, "file");
            return this;
        }

        /**
         * {@code docker.defaultUser}: the sandbox user of a root JVM when the spec names none.
         *
         * @param user {@code uid} or {@code uid:gid}, each at most 2147483647 (what the engine accepts); a bare
         *             {@code uid} means {@code uid:uid}
         * @return this builder
         * @throws SandboxConfigurationException if it is not
         */
        public Builder defaultUser(String user) {
            String u = Objects.requireNonNull(user, "user").trim();
            try {
                HostWorkspaces.Ids ids = HostWorkspaces.Ids.parse(u);
                dev.sandboxkit.docker.internal.workdir.DockerWorkspaces.requireEngineIds(ids);
                this.defaultUser = ids.toString(); // uid:gid, as a bare uid would run in group 0
            } catch (IllegalArgumentException | SandboxConfigurationException e) {
                throw new SandboxConfigurationException(DEFAULT_USER_KEY + ": " + e.getMessage(), e);
            }
            return this;
        }

        /**
         * {@code docker.pullTimeout}: how long an image pull may take.
         *
         * @param timeout a positive duration
         * @return this builder
         * @throws SandboxConfigurationException if it is not positive
         */
        public Builder pullTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new SandboxConfigurationException(PULL_TIMEOUT_KEY + ": must be positive, got "
                        + ConfigValues.format(timeout));
            }
            this.pullTimeout = timeout;
            return this;
        }

        /**
         * {@code docker.workdirs}: where new sessions' workdirs live. Existing workdirs stay where they are.
         *
         * @param where {@link Workdirs#HOST} or {@link Workdirs#VOLUME}
         * @return this builder
         */
        public Builder workdirs(Workdirs where) {
            this.workdirs = Objects.requireNonNull(where, "where");
            return this;
        }

        /**
         * {@code docker.channelSetsid}: {@code false} runs command-channel commands without {@code setsid}: one exec
         * less per command, but the commands of a channel share its process group, so a {@code kill 0} also reaches
         * background jobs earlier commands left.
         *
         * @param setsid whether each channel command gets a session of its own
         * @return this builder
         */
        public Builder channelSetsid(boolean setsid) {
            this.channelSetsid = setsid;
            return this;
        }

        /**
         * {@code docker.channelIdleTimeout}: a command channel idle for longer is closed (its socket freed) and
         * reopened by the sandbox's next exec.
         *
         * @param timeout zero for never, else positive
         * @return this builder
         * @throws SandboxConfigurationException if it is negative
         */
        public Builder channelIdleTimeout(Duration timeout) {
            if (timeout.isNegative()) {
                throw new SandboxConfigurationException(CHANNEL_IDLE_TIMEOUT_KEY + ": must not be negative, got "
                        + ConfigValues.format(timeout));
            }
            this.channelIdleTimeout = timeout;
            return this;
        }

        /**
         * The settings.
         *
         * @return the immutable settings
         */
        public DockerSettings build() {
            return new DockerSettings(this);
        }
    }
}
