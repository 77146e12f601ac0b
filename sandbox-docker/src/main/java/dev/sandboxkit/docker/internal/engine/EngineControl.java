package dev.sandboxkit.docker.internal.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandboxkit.SandboxException;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The control calls (containers, volumes, images, logs) on {@link EngineClient}: each under a deadline, a transport
 * failure turned into {@link DockerHost#unreachable} (an interrupt into a {@link SandboxException} with the flag
 * kept), and the answer's status left for the caller to read (with {@link EngineErrors} where text must decide).
 * Thread-safe.
 */
public final class EngineControl {
    private final EngineClient client;
    private final DockerHost host;

    /**
     * Control calls over {@code client}.
     *
     * @param client the driver's engine client
     */
    public EngineControl(EngineClient client) {
        this.client = client;
        this.host = client.host();
    }

    /**
     * The client underneath.
     *
     * @return the engine client
     */
    public EngineClient client() {
        return client;
    }

    /**
     * One request under the default deadline.
     *
     * @param method HTTP method
     * @param path   path below the API version, with its query
     * @param body   the JSON body, or {@code null}
     * @return the answer
     * @throws SandboxException (unavailable) if the engine cannot be reached or does not answer in time
     */
    public EngineClient.Response call(String method, String path, Object body) {
        return call(method, path, body, System.nanoTime() + EngineClient.REQUEST_TIMEOUT_NANOS);
    }

    /**
     * One request under its own deadline.
     *
     * @param method   HTTP method
     * @param path     path below the API version, with its query
     * @param body     the JSON body, or {@code null}
     * @param deadline {@link System#nanoTime()} by which the answer must have arrived
     * @return the answer
     * @throws SandboxException (unavailable) if the engine cannot be reached or does not answer in time
     */
    public EngineClient.Response call(String method, String path, Object body, long deadline) {
        try {
            return client.call(method, path, body, deadline);
        } catch (IOException e) {
            throw failure(e);
        }
    }

    /**
     * What a failed call becomes: an interrupt keeps the thread's flag, anything else is the engine unreachable.
     *
     * @param e the transport failure
     * @return the exception to throw
     */
    public SandboxException failure(IOException e) {
        if (e instanceof InterruptedIOException && !(e instanceof java.net.SocketTimeoutException)) {
            Thread.currentThread().interrupt();
            return new SandboxException("interrupted while waiting for the Docker engine", e);
        }
        return host.unreachable(e);
    }

    /**
     * The parsed body of a successful answer.
     *
     * @param r    the answer
     * @param what what was asked, for the message
     * @return the JSON
     * @throws SandboxException if the body is not JSON
     */
    public JsonNode json(EngineClient.Response r, String what) {
        try {
            return r.json();
        } catch (IOException e) {
            throw new SandboxException("unreadable answer from the Docker engine at " + host + " to " + what, e);
        }
    }

    /**
     * The query parameter {@code filters={"label":["k=v",...]}}, URL-encoded, as docker-java's label filter sent it.
     *
     * @param labels the labels every match carries
     * @return {@code filters=...}
     */
    public static String labelFilter(Map<String, String> labels) {
        List<String> filter = new ArrayList<>();
        labels.forEach((k, v) -> filter.add(v == null ? k : k + "=" + v));
        return labelFilter(filter);
    }

    /**
     * As {@link #labelFilter(Map)}, from {@code k=v} strings.
     *
     * @param filter the label conditions
     * @return {@code filters=...}
     */
    public static String labelFilter(List<String> filter) {
        ObjectNode f = EngineClient.JSON.createObjectNode();
        f.set("label", EngineClient.JSON.valueToTree(filter));
        return "filters=" + URLEncoder.encode(f.toString(), StandardCharsets.UTF_8);
    }

    /**
     * Every container, running or not, carrying {@code labels} ({@code GET /containers/json?all=true}).
     *
     * @param labels the labels to filter by
     * @return the engine's summaries ({@code Id}, {@code Labels}, {@code Created}, {@code State})
     * @throws SandboxException if the engine refuses or cannot be reached
     */
    public List<JsonNode> containers(Map<String, String> labels) {
        EngineClient.Response r = call("GET", "/containers/json?all=true" + (labels.isEmpty() ? ""
                : "&" + labelFilter(labels)), null);
        if (r.status() != 200) {
            throw new SandboxException("cannot list containers (" + r.status() + "): " + r.message());
        }
        List<JsonNode> out = new ArrayList<>();
        json(r, "a container listing").forEach(out::add);
        return out;
    }

    /**
     * Removes a container, killing it first ({@code DELETE /containers/{id}?force=true}).
     *
     * @param id      the container
     * @param volumes whether its anonymous volumes go too ({@code v=true})
     * @return the answer: 204 removed, 404 already gone, 409 another removal under way
     */
    public EngineClient.Response removeContainer(String id, boolean volumes) {
        return call("DELETE", "/containers/" + EngineClient.segment(id) + "?" + (volumes ? "v=true&" : "")
                + "force=true", null);
    }

    /**
     * The last lines a container printed, stdout and stderr in order (for error messages; callers read a failure
     * as no text).
     *
     * @param id      the container
     * @param lines   how many lines from the end
     * @param timeout how long to wait for them
     * @return the text
     * @throws SandboxException if the engine refuses or cannot be reached
     */
    public String logTail(String id, int lines, Duration timeout) {
        EngineClient.Response r = call("GET", "/containers/" + EngineClient.segment(id)
                + "/logs?stdout=true&stderr=true&tail=" + lines, null, System.nanoTime() + timeout.toNanos());
        if (r.status() != 200) {
            throw new SandboxException("cannot read the logs of " + EngineExec.shortId(id) + " (" + r.status() + "): "
                    + r.message());
        }
        return logText(r.body());
    }

    /** The multiplexed log stream's payloads (a container without a terminal), else the raw bytes. */
    static String logText(byte[] body) {
        boolean framed = body.length >= 8 && body[0] >= 0 && body[0] <= 2 && body[1] == 0 && body[2] == 0
                && body[3] == 0;
        if (!framed) {
            return new String(body, StandardCharsets.UTF_8);
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        new StreamDemux().consume(ByteBuffer.wrap(body), new StreamDemux.Sink() {
            @Override
            public void header(int type, long size) {
            }

            @Override
            public void payload(byte[] array, int offset, int length) {
                out.write(array, offset, length);
            }
        });
        return out.toString(StandardCharsets.UTF_8);
    }
}
