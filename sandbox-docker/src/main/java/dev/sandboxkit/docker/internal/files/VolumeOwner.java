package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFileException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Gives one volume workdir to the sandbox user: its top directory ({@link #ownRoot}), and, when the user
 * changed, every entry of the previous owner ({@link #claim}), in a one-off root container.
 */
final class VolumeOwner {
    /** Capabilities of the re-owning container: chown, and reading and searching directories of any mode. */
    static final List<String> REOWN_CAPABILITIES = List.of("CHOWN", "DAC_READ_SEARCH");
    private static final int ROOT_ENTRY_BYTES = 64 * 1024;
    private static final String REOWN_NEEDS = " (re-owning runs sh, find, chown and chgrp from the session's image)";

    private final VolumeAccess access;
    private final VolumePaths paths;
    private final String root;
    private final long uid;
    private final long gid;

    VolumeOwner(VolumeAccess access, VolumePaths paths, String root, long uid, long gid) {
        this.access = access;
        this.paths = paths;
        this.root = root;
        this.uid = uid;
        this.gid = gid;
    }

    /**
     * Gives the workdir's top directory to the owner, mode 0700, as a host workdir is made.
     */
    void ownRoot() {
        int slash = root.lastIndexOf('/');
        String parent = slash <= 0 ? "/" : root.substring(0, slash);
        byte[] name = FileRules.bytes(root.substring(slash + 1) + "/");
        byte[] entry = VolumePaths.concat(TarFormat.header(name, TarFormat.DIRECTORY, 0700, 0, uid, gid,
                Instant.now().getEpochSecond(), null), TarFormat.endOfArchive());
        access.quiesced(live -> {
            paths.put(parent, new ByteArrayInputStream(entry), entry.length, "");
            return null;
        });
    }

    /** Re-owns the tree when the owner changed, then the top: see {@link VolumeFiles#claim}. */
    boolean claim(String shown) {
        return access.quiesced(live -> {
            TarFormat.Entry top = rootEntry();
            boolean reown = top.uid() != uid || top.gid() != gid;
            if (reown) {
                reown(top.uid(), top.gid(), shown);
            }
            ownRoot();
            return reown;
        });
    }

    /**
     * The top directory's tar entry, for its owner (the engine's stat has none): the first header of its
     * archive, from the archive's first {@value #ROOT_ENTRY_BYTES} bytes only (its PAX records included).
     */
    private TarFormat.Entry rootEntry() {
        byte[] prefix = access.getPrefix(root, ROOT_ENTRY_BYTES);
        try {
            TarFormat.Entry e = new TarFormat.Reader(new ByteArrayInputStream(prefix)).next();
            if (e == null || e.type() != TarFormat.DIRECTORY) {
                throw new SandboxException("the engine's archive of the workdir does not start with its directory");
            }
            return e;
        } catch (IOException e) {
            throw FileRules.ioError("read the owner of", "", e);
        }
    }

    private void reown(long fromUid, long fromGid, String shown) {
        String u = Long.toString(uid);
        String g = Long.toString(gid);
        // A pass for the owner, then one for the group: busybox's find never runs an -exec ... + inside
        // parentheses, so no one-pass expression. find never follows links, chown -h and chgrp -h change links
        // themselves, and -exec ... + passes names as arguments (any bytes, newlines included). The top is left
        // to ownRoot, last.
        List<String> passes = new ArrayList<>();
        if (fromUid != uid) {
            passes.add("find \"$0\" -xdev -mindepth 1 -depth -user \"$1\" -exec chown -h \"$2\" {} +");
        }
        if (fromGid != gid) {
            passes.add("find \"$0\" -xdev -mindepth 1 -depth -group \"$3\" -exec chgrp -h \"$4\" {} +");
        }
        List<String> argv = List.of("sh", "-c", String.join(" && ", passes), root, Long.toString(fromUid), u,
                Long.toString(fromGid), g);
        String to = u + ":" + g;
        String failed = "cannot give workdir " + shown + " to the sandbox user " + to + " (its previous owner is "
                + fromUid + ":" + fromGid + "): ";
        VolumeAccess.Run r;
        try {
            r = access.runAsRoot(argv, REOWN_CAPABILITIES);
        } catch (SandboxFileException e) { // the engine could not run it: no sh in the image, say
            throw new SandboxException(failed + e.getMessage().strip() + REOWN_NEEDS, e);
        }
        if (r.exitCode() != 0) {
            String out = r.output().strip();
            throw new SandboxException(failed + "exit " + r.exitCode() + ": "
                    + (out.length() > 500 ? out.substring(0, 500) : out) + REOWN_NEEDS);
        }
    }
}
