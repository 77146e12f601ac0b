package dev.sandboxkit.spi;

import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxUnavailableException;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.UUID;
import java.util.regex.Pattern;

/** {@link ArchiveStore#directory}: one file per key, written under a temporary name and renamed into place. */
final class DirectoryArchiveStore implements ArchiveStore {
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*");

    private final Path directory;

    DirectoryArchiveStore(Path directory) {
        this.directory = directory.toAbsolutePath().normalize();
    }

    @Override
    public void put(String key, Path file, String sha256) {
        Path target = resolve(key);
        Path temp = target.resolveSibling("." + target.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            Files.createDirectories(target.getParent());
            Files.copy(file, temp);
            try (FileChannel c = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                c.force(true); // durable before it is named: the caller deletes its copy next
            }
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new SandboxUnavailableException("cannot store archive " + target + ": " + e, e);
        } finally {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // a leftover temporary name is never read
            }
        }
    }

    @Override
    public void get(String key, Path file) {
        Path source = resolve(key);
        try {
            Files.copy(source, file, StandardCopyOption.REPLACE_EXISTING);
        } catch (NoSuchFileException e) {
            throw new SandboxNotFoundException("archive " + source + " does not exist", e);
        } catch (IOException e) {
            throw new SandboxUnavailableException("cannot read archive " + source + ": " + e, e);
        }
    }

    @Override
    public void delete(String key) {
        try {
            Files.deleteIfExists(resolve(key));
        } catch (IOException e) {
            throw new SandboxUnavailableException("cannot delete archive " + key + " in " + directory + ": " + e, e);
        }
    }

    @Override
    public String describe() {
        return directory.toString();
    }

    private Path resolve(String key) {
        if (!KEY.matcher(key).matches() || key.contains("..")) {
            throw new SandboxException("invalid archive key: " + key);
        }
        return directory.resolve(key);
    }

    @Override
    public String toString() {
        return "ArchiveStore.directory(" + directory + ")";
    }
}
