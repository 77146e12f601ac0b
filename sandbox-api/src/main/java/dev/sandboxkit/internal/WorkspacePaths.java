package dev.sandboxkit.internal;

import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxSpec;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Turns a files-API path into the canonical form drivers receive: relative to the workdir,
 * {@code /}-separated, no empty, {@code .} or {@code ..} components; {@code ""} is the workdir itself.
 * Lexical only: links are the driver's business (it must never follow them).
 */
final class WorkspacePaths {
    /** Linux's PATH_MAX; longer paths could never be opened anyway. */
    private static final int MAX_PATH_BYTES = 4096;
    /** Linux's NAME_MAX. */
    private static final int MAX_NAME_BYTES = 255;

    private WorkspacePaths() {
    }

    static String normalize(String path) {
        Objects.requireNonNull(path, "path");
        if (path.indexOf('\0') >= 0) {
            throw invalid(path, "it contains NUL");
        }
        String p = path;
        if (p.startsWith("/")) {
            if (p.equals(SandboxSpec.WORKSPACE) || p.startsWith(SandboxSpec.WORKSPACE + "/")) {
                p = p.substring(SandboxSpec.WORKSPACE.length());
            } else {
                throw invalid(path, "absolute paths must be inside " + SandboxSpec.WORKSPACE);
            }
        }
        StringBuilder out = new StringBuilder(p.length());
        for (String part : p.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                throw invalid(path, "'..' is not allowed");
            }
            if (part.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
                throw invalid(path, "a component is longer than " + MAX_NAME_BYTES + " bytes");
            }
            if (out.length() > 0) {
                out.append('/');
            }
            out.append(part);
        }
        String normalized = out.toString();
        if (normalized.getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
            throw invalid(path, "it is longer than " + MAX_PATH_BYTES + " bytes");
        }
        return normalized;
    }

    private static SandboxFileException invalid(String path, String why) {
        return new SandboxFileException(SandboxFileException.Reason.INVALID_PATH,
                "invalid workdir path '" + path + "': " + why);
    }
}
