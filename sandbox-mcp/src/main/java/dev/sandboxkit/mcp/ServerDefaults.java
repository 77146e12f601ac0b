package dev.sandboxkit.mcp;

import dev.sandboxkit.SandboxConfig;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.ListResourceBundle;
import java.util.ResourceBundle;
import java.util.Set;
import java.util.UUID;

/**
 * The few settings in which the server departs from the library's defaults ({@link SandboxConfig}), each with its
 * reason: what a standalone program needs that a client starts from a one-line configuration. Every other setting is
 * the library's default, so that a change there reaches the server. Each applies only when no layer names its key
 * ({@code -Dsandboxkit.*}, a {@code SANDBOX_MCP_*} variable, a flag or {@code --set}).
 */
final class ServerDefaults {
    /** {@code spec.image}: the library has none. */
    static final String IMAGE = "python:3.12-slim";
    /** {@code workspace-root}. */
    static final String WORKSPACE_ROOT = "~/.sandboxkit/mcp/workspaces";
    /** {@code --store}: not a library setting (the library's store is in memory, given to the builder). */
    static final String STORE = "h2";
    /** The H2 file of {@code --store h2}. */
    static final String H2_FILE = "~/.sandboxkit/mcp/sessions";

    /** A setting the server chooses, and why. */
    record Default(String key, String value, String reason) {
    }

    /** The table; {@code fleet} is derived from the store ({@link #fleet}). */
    static final List<Default> ALL = List.of(
            new Default("spec.image", IMAGE, "the library has no default image, and a server must start from a "
                    + "one-line client configuration"),
            new Default("workspace-root", WORKSPACE_ROOT, "a keyed workspace must survive restarts and reboots, "
                    + "which java.io.tmpdir (the library's default) does not promise"),
            new Default("tools.session-prefix", "mcp-", "workspaces are named mcp-k.<key> and mcp-s.<MCP session>: "
                    + "apart from an application's conv-* sessions, and found again under the same name"));

    private ServerDefaults() {
    }

    /**
     * Applies every default whose key no layer named, and the fleet.
     *
     * @param config    the settings
     * @param named     the keys some layer named (without the prefix)
     * @param storeFile the H2 file, or {@code null} for the in-memory store
     * @return the keys set here
     */
    static List<String> apply(SandboxConfig config, Set<String> named, Path storeFile) {
        List<String> applied = new ArrayList<>();
        for (Default d : ALL) {
            if (!named.contains(d.key())) {
                config.set(d.key(), d.value());
                applied.add(d.key());
            }
        }
        if (!named.contains("fleet")) {
            config.set("fleet", fleet(storeFile));
            applied.add("fleet");
        }
        return applied;
    }

    /**
     * {@code fleet}: servers sharing a store share a fleet, and only they do (the library's {@code default} is every
     * application's); an in-memory store is a fleet of its own.
     *
     * @param storeFile the H2 file, or {@code null} for the in-memory store
     * @return the fleet
     */
    static String fleet(Path storeFile) {
        return storeFile == null ? "mcp-" + UUID.randomUUID().toString().substring(0, 8)
                : "mcp-" + sha256(storeFile.toString()).substring(0, 12);
    }

    /**
     * The library's defaults as {@code default.KEY}, for the help's {@code ${bundle:default.KEY}}: shown from the
     * library, never re-typed here.
     *
     * @return the bundle
     */
    static ResourceBundle libraryDefaults() {
        return new ListResourceBundle() {
            @Override
            protected Object[][] getContents() {
                return SandboxConfig.keys().stream().map(k -> new Object[]{"default." + k.name(),
                        k.defaultValue() == null ? "none" : k.defaultValue()}).toArray(Object[][]::new);
            }
        };
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
