package dev.sandboxkit.kubernetes;

import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.spi.PortConnection;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.PortForward;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;

/**
 * A connection to a pod's port over the API server's port-forward stream (fabric8's {@code portForward} with
 * channels): the pod keeps its network policy, nothing is exposed. Bytes to the pod go through a pipe that
 * fabric8's pumper thread reads; bytes from the pod arrive on fabric8's websocket thread, which writes them into
 * a second pipe that {@link #input()} reads. Both pipes block when full, so flow control reaches both ends.
 *
 * <p>The port-forward protocol has no half-close: {@link #shutdownOutput()} stops sending, but the service in the
 * pod does not read end of stream; its answer still comes back.
 */
final class PodPortConnection implements PortConnection {
    private final PortForward forward;
    private final Pipe.SinkChannel toPod;
    private final Pipe.SourceChannel fromPod;
    private final InputStream input;
    private final OutputStream output;

    private PodPortConnection(PortForward forward, Pipe.SinkChannel toPod, Pipe.SourceChannel fromPod) {
        this.forward = forward;
        this.toPod = toPod;
        this.fromPod = fromPod;
        this.input = Channels.newInputStream(fromPod);
        this.output = Channels.newOutputStream(toPod);
    }

    static PodPortConnection open(KubernetesClient client, String namespace, String pod, int port) {
        Pipe up;
        Pipe down;
        try {
            up = Pipe.open();
            down = Pipe.open();
        } catch (IOException e) {
            throw new SandboxUnavailableException("cannot open pipes for a port forward: " + e, e);
        }
        try {
            PortForward forward = client.pods().inNamespace(namespace).withName(pod)
                    .portForward(port, up.source(), down.sink());
            return new PodPortConnection(forward, up.sink(), down.source());
        } catch (KubernetesClientException e) {
            closeAll(up.source(), up.sink(), down.source(), down.sink());
            if (e.getCode() == 404) {
                throw new SandboxNotFoundException("pod " + pod + " does not exist", e);
            }
            throw new SandboxUnavailableException("cannot forward port " + port + " of pod " + pod + ": "
                    + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeAll(up.source(), up.sink(), down.source(), down.sink());
            throw e;
        }
    }

    @Override
    public InputStream input() {
        return input;
    }

    @Override
    public OutputStream output() {
        return output;
    }

    @Override
    public void shutdownOutput() throws IOException {
        toPod.close(); // fabric8's pumper reads end of stream and stops sending
    }

    @Override
    public void close() {
        try {
            forward.close();
        } catch (IOException | RuntimeException ignored) {
            // closing the pipes below ends both pumps anyway
        }
        closeAll(toPod, fromPod);
    }

    private static void closeAll(java.io.Closeable... channels) {
        for (java.io.Closeable c : channels) {
            try {
                c.close();
            } catch (IOException ignored) {
                // nothing left to release
            }
        }
    }
}
