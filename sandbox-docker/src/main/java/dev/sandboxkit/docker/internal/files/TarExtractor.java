package dev.sandboxkit.docker.internal.files;

import dev.sandboxkit.FileLimits;
import dev.sandboxkit.UploadResult;

import java.io.IOException;
import java.io.InputStream;

/**
 * The one tar extractor of both workdir backends: reads an uploaded (or imported) archive, applies every entry
 * check (count and size limits, names, entry types, link targets, modes) and hands each accepted entry to the
 * backend's {@link Target}, which only places it. So an entry the host backend refuses, the volume backend refuses
 * with the same error.
 */
final class TarExtractor {
    /**
     * Where accepted entries go. {@code rel} is the entry's components below the target directory, {@code comps}
     * the same below the workdir, {@code path} those joined.
     *
     * @param <X> the backend's own checked failure, if any
     */
    interface Target<X extends Exception> {
        /** A directory; {@code rel} is empty for the target directory itself; {@code mode} is -1 unless importing. */
        void directory(String[] rel, String[] comps, int mode) throws IOException, X;

        /** A regular file with its final mode, whose content {@code content} copies; returns the bytes copied. */
        long file(String[] rel, String[] comps, String path, int mode, long size, TarFormat.Reader content)
                throws IOException, X;

        /** A symbolic link, stored as it is (never followed). */
        void symlink(String[] rel, String[] comps, String path, byte[] target) throws IOException, X;
    }

    private TarExtractor() {
    }

    /**
     * Extracts {@code tar} below {@code base}.
     *
     * @param archive whether this is a whole-workdir import: links keep any target, files and directories their
     *                permission bits; otherwise links must stay inside the workdir and only the executable bit
     *                of a file survives
     */
    static <X extends Exception> UploadResult extract(InputStream tar, String[] base, FileLimits limits,
            boolean archive, Target<X> target) throws IOException, X {
        TarFormat.Reader reader = new TarFormat.Reader(tar);
        int files = 0;
        int dirs = 0;
        int links = 0;
        long bytes = 0;
        int entries = 0;
        for (TarFormat.Entry e = reader.next(); e != null; e = reader.next()) {
            if (++entries > limits.maxEntries()) {
                throw FileRules.tooMany("the archive", limits.maxEntries());
            }
            String shownName = FileRules.text(e.name());
            String[] rel = FileRules.entryComponents(e.name(), shownName);
            String[] comps = FileRules.concat(base, rel);
            String path = String.join("/", comps);
            switch (e.type()) {
                case TarFormat.DIRECTORY -> {
                    target.directory(rel, comps, archive ? e.mode() & 0777 : -1);
                    dirs++;
                }
                case TarFormat.REGULAR, TarFormat.REGULAR_OLD, TarFormat.CONTIGUOUS -> {
                    if (rel.length == 0) {
                        throw TarFormat.invalid("a file entry names the target directory itself");
                    }
                    if (e.size() > limits.maxFileBytes()) {
                        throw FileRules.tooLarge(path, e.size(), limits.maxFileBytes());
                    }
                    // Never setuid, setgid or sticky.
                    int mode = archive ? e.mode() & 0777 : FileRules.uploadMode(e.mode());
                    bytes += target.file(rel, comps, path, mode, e.size(), reader);
                    files++;
                }
                case TarFormat.SYMLINK -> {
                    if (rel.length == 0) {
                        throw TarFormat.invalid("a link entry names the target directory itself");
                    }
                    if (!archive) {
                        FileRules.requireInside(e.link(), comps, shownName);
                    }
                    if (FileRules.text(e.link()).indexOf('\0') >= 0) {
                        throw TarFormat.invalid("link '" + shownName + "' has a target containing NUL");
                    }
                    target.symlink(rel, comps, path, e.link());
                    links++;
                }
                case TarFormat.HARDLINK -> throw TarFormat.invalid("entry '" + shownName
                        + "' is a hard link (to '" + FileRules.text(e.link()) + "'); hard links are not extracted");
                case TarFormat.CHAR_DEVICE, TarFormat.BLOCK_DEVICE -> throw TarFormat.invalid("entry '" + shownName
                        + "' is a device node; devices are never created");
                case TarFormat.FIFO -> throw TarFormat.invalid("entry '" + shownName + "' is a FIFO; not created");
                default -> throw TarFormat.invalid("entry '" + shownName + "' has unsupported type '"
                        + (char) e.type() + "'");
            }
        }
        return new UploadResult(files, dirs, links, bytes);
    }
}
