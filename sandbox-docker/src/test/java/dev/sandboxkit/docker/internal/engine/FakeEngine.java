package dev.sandboxkit.docker.internal.engine;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Answers each request with the handler's raw response; optionally drops the connection after each. With a
 * {@link Responder} it can also be hostile: write any bytes, for as long as it likes, then hang up.
 */
public final class FakeEngine implements AutoCloseable {
    public final List<String> requests = new CopyOnWriteArrayList<>();
    final AtomicInteger connections = new AtomicInteger();
    private final ServerSocketChannel server;
    private final Path socket;
    private final Thread acceptor;

    /** Writes the raw answer to one request; returning ends it (the connection is then closed if asked). */
    public interface Responder {
        /**
         * @param requestLine for example {@code GET /v1.41/exec/x/json HTTP/1.1}
         * @param out         the connection; writing fails once the client has gone away
         */
        void respond(String requestLine, OutputStream out) throws IOException;
    }

    public FakeEngine(Function<String, String> handler, boolean closeAfterEach) throws IOException {
        this((requestLine, out) -> out.write(handler.apply(requestLine).getBytes(StandardCharsets.UTF_8)),
                closeAfterEach);
    }

    public FakeEngine(Responder handler, boolean closeAfterEach) throws IOException {
        socket = java.nio.file.Files.createTempDirectory("fake-engine").resolve("docker.sock");
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        acceptor = new Thread(() -> {
            try {
                while (true) {
                    SocketChannel ch = server.accept();
                    connections.incrementAndGet();
                    Thread t = new Thread(() -> serve(ch, handler, closeAfterEach));
                    t.setDaemon(true);
                    t.start();
                }
            } catch (IOException closed) {
                // server closed
            }
        });
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public DockerHost host() {
        return DockerHost.parse(uri());
    }

    public String uri() {
        return "unix://" + socket;
    }

    public static String response(int status, String json) {
        return "HTTP/1.1 " + status + " X\r\nContent-Type: application/json\r\nContent-Length: "
                + json.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + json;
    }

    private void serve(SocketChannel ch, Responder handler, boolean closeAfterEach) {
        try (ch; InputStream in = Channels.newInputStream(ch); OutputStream out = Channels.newOutputStream(ch)) {
            while (true) {
                String head = readHead(in);
                if (head == null) {
                    return;
                }
                String[] lines = head.split("\r\n");
                int length = 0;
                for (String line : lines) {
                    if (line.toLowerCase().startsWith("content-length:")) {
                        length = Integer.parseInt(line.substring(15).trim());
                    }
                }
                in.readNBytes(length);
                String[] requestLine = lines[0].split(" ");
                requests.add(requestLine[0] + " " + requestLine[1]);
                handler.respond(lines[0], out);
                out.flush();
                if (closeAfterEach) {
                    return;
                }
            }
        } catch (IOException e) {
            // client went away
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
            head.write(b);
            byte[] h = head.toByteArray();
            int n = h.length;
            if (n >= 4 && h[n - 4] == '\r' && h[n - 3] == '\n' && h[n - 2] == '\r' && h[n - 1] == '\n') {
                return new String(h, 0, n - 4, StandardCharsets.ISO_8859_1);
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        server.close();
        java.nio.file.Files.deleteIfExists(socket);
        java.nio.file.Files.deleteIfExists(socket.getParent());
    }
}
