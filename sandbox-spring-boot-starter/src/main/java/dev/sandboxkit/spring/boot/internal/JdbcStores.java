package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.spi.SessionStore;
import dev.sandboxkit.spring.boot.SandboxProperties;
import dev.sandboxkit.spring.boot.SandboxProperties.StoreType;
import dev.sandboxkit.store.jdbc.JdbcSessionStore;

import javax.sql.DataSource;

/** The JDBC session stores; only loaded when sandbox-store-jdbc is on the classpath. */
public final class JdbcStores {
    private JdbcStores() {
    }

    /**
     * The store {@code sandboxkit.store} asks for.
     *
     * @param p          the properties; {@code store} is h2, sqlite or jdbc
     * @param dataSource the application's DataSource, or {@code null}
     * @return the store
     * @throws SandboxConfigurationException naming the property, if it cannot be created as configured
     */
    public static SessionStore create(SandboxProperties p, DataSource dataSource) {
        StoreType type = p.getStore();
        try {
            switch (type) {
                case H2:
                case SQLITE:
                    if (p.getStoreFile() == null) {
                        throw Check.invalid("sandboxkit.store-file", "it is required with sandboxkit.store="
                                + type.name().toLowerCase());
                    }
                    return type == StoreType.H2 ? JdbcSessionStore.h2(p.getStoreFile())
                            : JdbcSessionStore.sqlite(p.getStoreFile());
                case JDBC:
                    if (dataSource == null) {
                        throw Check.invalid("sandboxkit.store", "jdbc needs one DataSource bean (for example "
                                + "spring-boot-starter-jdbc with spring.datasource.url), or use sandboxkit.store=h2 "
                                + "with sandboxkit.store-file");
                    }
                    return JdbcSessionStore.builder(dataSource).autoMigrate(p.isStoreAutoMigrate()).build();
                default:
                    throw new IllegalArgumentException("not a JDBC store: " + type);
            }
        } catch (SandboxConfigurationException e) {
            if (e.getMessage().startsWith("Invalid property")) {
                throw e;
            }
            throw Check.invalid("sandboxkit.store", type.name().toLowerCase() + ": " + e.getMessage(), e);
        }
    }
}
