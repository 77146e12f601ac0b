/**
 * The JDBC session store: exports only {@link dev.sandboxkit.store.jdbc}. JDBC drivers are loaded by class name or
 * through {@link java.sql.DriverManager}, so the module reads none of them; put the one you use on the module path.
 */
module dev.sandboxkit.store.jdbc {
    requires transitive dev.sandboxkit;
    requires transitive java.sql;
    requires static org.jspecify;
    requires org.slf4j;

    exports dev.sandboxkit.store.jdbc;
    // The shipped migration scripts (resources only, no classes), read through the class loader.
    opens dev.sandboxkit.store.jdbc.schema.h2;
    opens dev.sandboxkit.store.jdbc.schema.sqlite;
    opens dev.sandboxkit.store.jdbc.schema.postgresql;
}
