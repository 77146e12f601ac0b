/**
 * A durable {@link dev.sandboxkit.spi.SessionStore} on JDBC: {@link dev.sandboxkit.store.jdbc.JdbcSessionStore}.
 *
 * <ul>
 *   <li>{@code JdbcSessionStore.h2(path)}: an H2 file, one host, several processes ({@code AUTO_SERVER}).</li>
 *   <li>{@code JdbcSessionStore.sqlite(path)}: a SQLite file in WAL mode, one host.</li>
 *   <li>{@code JdbcSessionStore.create(dataSource)}: PostgreSQL (or H2/SQLite) through your connection pool;
 *       the store to share between managers on several hosts.</li>
 * </ul>
 *
 * <p>The schema is created and migrated at construction from SQL files shipped in this jar under
 * {@code dev/sandboxkit/store/jdbc/schema/<postgresql|h2|sqlite>/V<n>__<name>.sql}; teams that manage
 * schemas themselves run exactly those files and build the store with {@code autoMigrate(false)}.
 * The JDBC drivers are optional dependencies: add the one you use.
 */
package dev.sandboxkit.store.jdbc;
