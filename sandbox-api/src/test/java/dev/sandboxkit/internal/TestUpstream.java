package dev.sandboxkit.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;

/** A one-request-per-connection HTTP upstream for the proxy's tests: keeps each request head, answers a body. */
final class TestUpstream {
    private TestUpstream() {
    }

    /**
     * Answers every connection to {@code server} until it closes.
     *
     * @param server where to accept (plain or TLS)
     * @param io     runs the accept loop
     * @param body   the answer's body
     * @param saw    gets the last request head
     */
    static void serve(ServerSocket server, Executor io, String body, AtomicReference<String> saw) {
        io.execute(() -> {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    StringBuilder head = new StringBuilder();
                    while (!head.toString().endsWith("\r\n\r\n")) {
                        int b = in.read();
                        if (b < 0) {
                            break;
                        }
                        head.append((char) b);
                    }
                    saw.set(head.toString());
                    s.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Length: " + body.length()
                            + "\r\nConnection: close\r\n\r\n" + body).getBytes(StandardCharsets.ISO_8859_1));
                } catch (IOException e) {
                    // closed at teardown, or a handshake a test meant to fail
                }
            }
        });
    }
}
