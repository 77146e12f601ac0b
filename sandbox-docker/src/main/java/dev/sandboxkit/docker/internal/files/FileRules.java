package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileType;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxFileException.Reason;
import dev.sandboxkit.SandboxNotFoundException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The rules both workdir backends ({@link HostFiles}, {@link VolumeFiles}) apply, kept in one place so that they
 * cannot drift apart: workdir-relative paths and tar entry names, the modes given to what is written, the limits,
 * and the exceptions each refusal raises.
 */
final class FileRules {
    static final int FILE_MODE = 0644;
    static final int EXEC_MODE = 0755;
    static final int DIR_MODE = 0755;
    /** Deepest directory nesting walked (one descriptor per level is held); the recursive delete has no limit. */
    static final int MAX_DEPTH = 256;
    private static final int BUFFER = 64 * 1024;

    private FileRules() {
    }

    // ================================================================== paths

    static String[] split(String path) {
        return path.isEmpty() ? new String[0] : path.split("/");
    }

    static String last(String[] comps) {
        return comps[comps.length - 1];
    }

    static String[] concat(String[] a, String[] b) {
        String[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    static byte[] bytes(String name) {
        return name.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] name) {
        return new String(name, StandardCharsets.UTF_8);
    }

    static void requireNotWorkdir(String[] comps) {
        if (comps.length == 0) {
            throw new SandboxFileException(Reason.INVALID_PATH, "cannot delete the workdir itself");
        }
    }

    // ================================================================== tar entries

    /** An entry name as workdir components: refuses absolute names and {@code ..}; drops {@code .} and empties. */
    static String[] entryComponents(byte[] name, String shown) {
        if (name.length > 0 && name[0] == '/') {
            throw TarFormat.invalid("entry '" + shown + "' has an absolute name");
        }
        if (shown.indexOf('\0') >= 0) {
            throw TarFormat.invalid("entry '" + shown.replace('\0', '?') + "' contains NUL");
        }
        List<String> out = new ArrayList<>();
        for (String part : shown.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                throw TarFormat.invalid("entry '" + shown + "' contains '..'");
            }
            out.add(part);
        }
        return out.toArray(new String[0]);
    }

    /** A link target must be relative and, resolved lexically from where the link sits, stay in the workdir. */
    static void requireInside(byte[] target, String[] linkComps, String shown) {
        String t = text(target);
        if (t.indexOf('\0') >= 0) {
            throw TarFormat.invalid("link '" + shown + "' has a target containing NUL");
        }
        if (target.length == 0 || target[0] == '/') {
            throw TarFormat.invalid("link '" + shown + "' points to an absolute path ('" + t + "')");
        }
        int depth = linkComps.length - 1; // the link's directory, counted from the workdir
        for (String part : t.split("/")) {
            if (part.equals("..")) {
                if (--depth < 0) {
                    throw TarFormat.invalid("link '" + shown + "' points outside the workdir ('" + t + "')");
                }
            } else if (!part.isEmpty() && !part.equals(".")) {
                depth++;
            }
        }
    }

    /** An uploaded file's mode: only the executable bit survives, never setuid, setgid or sticky. */
    static int uploadMode(int tarMode) {
        return (tarMode & 0111) != 0 ? EXEC_MODE : FILE_MODE;
    }

    // ================================================================== content

    static void requireRegular(FileType type, String path) {
        switch (type) {
            case FILE -> {
            }
            case DIRECTORY -> throw new SandboxFileException(Reason.IS_A_DIRECTORY, "'" + path + "' is a directory");
            case SYMLINK -> throw symlink(path);
            default -> throw new SandboxFileException(Reason.NOT_A_REGULAR_FILE, "'" + path
                    + "' is not a regular file (FIFO, socket or device); it is never opened");
        }
    }

    /** Copies {@code in} to its end, failing once more than {@code cap} bytes came; returns the count. */
    static long copyCapped(InputStream in, WritableByteChannel out, long cap, String path) throws IOException {
        byte[] buf = new byte[BUFFER];
        long total = 0;
        for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
            total += n;
            if (total > cap) {
                throw tooLarge(path, total, cap);
            }
            ByteBuffer bb = ByteBuffer.wrap(buf, 0, n);
            while (bb.hasRemaining()) {
                out.write(bb);
            }
        }
        return total;
    }

    // ================================================================== errors

    static SandboxNotFoundException notFound(String path) {
        return new SandboxNotFoundException("no such file or directory in the workdir: '" + path + "'");
    }

    static SandboxFileException symlink(String path) {
        return new SandboxFileException(Reason.SYMLINK, "'" + path + "' is a symbolic link; links are never followed");
    }

    static SandboxFileException tooLarge(String path, long size, long cap) {
        return new SandboxFileException(Reason.TOO_LARGE, "'" + path + "' is larger than the " + cap
                + "-byte file limit (" + size + " bytes or more)");
    }

    static SandboxFileException tooMany(String what, int cap) {
        return new SandboxFileException(Reason.TOO_MANY_ENTRIES, what + " has more than the " + cap
                + "-entry limit");
    }

    static SandboxFileException tooDeep(String path) {
        return new SandboxFileException(Reason.TOO_DEEP, "'" + path + "' is nested deeper than " + MAX_DEPTH
                + " directories");
    }

    static SandboxException ioError(String what, String path, IOException e) {
        return new SandboxFileException(Reason.IO_ERROR, "cannot " + what + " '" + path + "': " + e, e);
    }

    /** The permission bits of {@code mode} (its low nine bits) as a set. */
    static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> p = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] order = {PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
                PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE,
                PosixFilePermission.GROUP_READ, PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_READ};
        for (int i = 0; i < order.length; i++) {
            if ((mode & (1 << i)) != 0) {
                p.add(order[i]);
            }
        }
        return p;
    }
}
