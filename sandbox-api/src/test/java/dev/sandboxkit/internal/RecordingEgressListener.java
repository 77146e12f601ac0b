package dev.sandboxkit.internal;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What an {@link EgressProxy} told its listener, one line per call, for the proxy's tests. */
final class RecordingEgressListener implements EgressProxy.Listener {
    /** The calls, in order. */
    final List<String> heard = new CopyOnWriteArrayList<>();

    @Override
    public void denied(String sessionId, String sandboxId, String host, int port, String reason) {
        heard.add("denied " + sessionId + " " + sandboxId + " " + host + ":" + port);
    }

    @Override
    public void allowed(String sessionId, String sandboxId, String host, int port) {
        heard.add("allowed " + sessionId + " " + sandboxId + " " + host + ":" + port);
    }

    @Override
    public void closed(String sessionId, long bytesIn, long bytesOut) {
        heard.add("closed " + sessionId);
    }
}
