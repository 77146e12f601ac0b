package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileType;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The paths of one volume workdir in the helper: {@link #walk} checks, one {@code HEAD} per component, that a
 * path's directories are real directories (making missing ones), {@link #put} sends an archive into the volume
 * and maps the engine's refusals to the files API's, {@link #abs} names a path in the helper.
 */
final class VolumePaths {
    private final VolumeAccess access;
    private final String root;
    private final long uid;
    private final long gid;

    VolumePaths(VolumeAccess access, String root, long uid, long gid) {
        this.access = access;
        this.root = root;
        this.uid = uid;
        this.gid = gid;
    }

    /**
     * Checks that {@code comps[0..count)} are real directories, one {@code HEAD} per component; with
     * {@code create}, missing ones are made (0755, the owner's).
     */
    List<VolumeAccess.PathStat> walk(String[] comps, int count, boolean create) {
        if (count > FileRules.MAX_DEPTH) {
            throw FileRules.tooDeep(String.join("/", comps));
        }
        List<VolumeAccess.PathStat> stats = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            String shown = String.join("/", Arrays.copyOf(comps, i + 1));
            String p = abs(comps, i + 1);
            VolumeAccess.PathStat st = access.stat(p);
            if (st == null && create) {
                byte[] entry = concat(TarFormat.header(FileRules.bytes(comps[i] + "/"), TarFormat.DIRECTORY,
                        FileRules.DIR_MODE, 0, uid, gid, Instant.now().getEpochSecond(), null), TarFormat.endOfArchive());
                put(abs(comps, i), new ByteArrayInputStream(entry), entry.length, shown);
                st = access.stat(p);
            }
            if (st == null) {
                throw FileRules.notFound(shown);
            }
            if (st.type() == FileType.SYMLINK) {
                throw FileRules.symlink(shown);
            }
            if (st.type() != FileType.DIRECTORY) {
                throw new SandboxFileException(Reason.NOT_A_DIRECTORY, "'" + shown + "' is not a directory");
            }
            stats.add(st);
        }
        return stats;
    }

    void put(String dir, InputStream body, long length, String shown) {
        try {
            access.put(dir, body, length);
        } catch (SandboxFileException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("cannot overwrite directory")) {
                throw new SandboxFileException(Reason.IS_A_DIRECTORY, "'" + shown + "': an entry names a directory", e);
            }
            if (m.contains("cannot overwrite non-directory")) {
                throw new SandboxFileException(Reason.NOT_A_DIRECTORY, "'" + shown + "': a component is not a directory",
                        e);
            }
            throw e;
        }
    }

    String abs(String[] comps, int count) {
        if (count == 0) {
            return root;
        }
        return root + "/" + String.join("/", Arrays.copyOf(comps, count));
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** A private (0600) temporary file in the JVM's temporary directory. */
    static Path tempFile() {
        try {
            return Files.createTempFile("sandboxkit-volume", ".tar");
        } catch (IOException e) {
            throw new SandboxFileException(Reason.IO_ERROR, "cannot create a temporary file: " + e, e);
        }
    }

    static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // a leftover in the temporary directory
        }
    }
}
