package dev.sandboxkit;

/** What a directory entry in the workdir is, as seen without following links. */
public enum FileType {
    /** A regular file. */
    FILE,
    /** A directory. */
    DIRECTORY,
    /** A symbolic link; the files API reports it but never follows it. */
    SYMLINK,
    /** A named pipe; never opened by the files API. */
    FIFO,
    /** A Unix-domain socket; never opened by the files API. */
    SOCKET,
    /** A character or block device node; never opened by the files API. */
    DEVICE
}
