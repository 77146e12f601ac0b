/**
 * The framework-neutral agent tool set: exports only {@link dev.sandboxkit.tools}; one class per tool family lives
 * in {@code dev.sandboxkit.tools.internal}, which is not exported.
 */
module dev.sandboxkit.tools {
    requires transitive dev.sandboxkit;
    requires static transitive org.jspecify;

    exports dev.sandboxkit.tools;
}
