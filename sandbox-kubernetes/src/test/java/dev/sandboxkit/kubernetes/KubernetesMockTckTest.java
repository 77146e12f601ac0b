package dev.sandboxkit.kubernetes;

import dev.sandboxkit.spi.ComputeCapability;
import dev.sandboxkit.spi.DriverContext;
import dev.sandboxkit.spi.SandboxDriver;
import dev.sandboxkit.testkit.ForwardingSandboxDriver;
import dev.sandboxkit.testkit.tck.SandboxDriverTck;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Both conformance kits against fabric8's mock API server, for what a mock can honestly serve: the
 * lifecycle, labels, listing, workspaces, idempotency and concurrent acquires. The mock has no kubelet,
 * so no process ever runs:
 * <ul>
 *   <li>the driver is presented with no capabilities, so every test that requires
 *       {@link ComputeCapability#REAL_PROCESSES} (all exec behaviour), {@code STDIN}, {@code STREAMING} or
 *       {@code KILL_PROCESS_GROUP} is skipped by the kit's own assumption;</li>
 *   <li>the tests that exec without asking for a capability (they write and read files in the workdir)
 *       are disabled by {@link NeedsRealCluster}, with the reason.</li>
 * </ul>
 * The full kits, these included, run against a real cluster with {@code -Pkubernetes-it}
 * ({@link KubernetesClusterTckIT}). Pod status comes from {@link FakeKubelet}.
 */
@ExtendWith(KubernetesMockTckTest.NeedsRealCluster.class)
class KubernetesMockTckTest extends SandboxDriverTck {
    // Both kits: the driver's one variant in the default build (pods and PVCs on the mock API server).

    private static final AtomicInteger NAMESPACES = new AtomicInteger();
    private static KubernetesMockServer server;
    private static KubernetesClient client;

    @BeforeAll
    @SuppressWarnings("deprecation") // jsonMapper(): what fabric8's own JUnit extension passes to the mock
    static void startMockApiServer() {
        // What @EnableKubernetesMockClient(crud = true) builds, kept for the whole class.
        server = new KubernetesMockServer(new Context(Serialization.jsonMapper()), new MockWebServer(), new HashMap<>(),
                new KubernetesMixedDispatcher(new HashMap<>()), true);
        server.init();
        client = server.createClient();
    }

    @AfterAll
    static void stopMockApiServer() {
        client.close();
        server.destroy();
    }

    @Override
    protected SandboxDriver createDriver(DriverContext context) {
        String ns = "tck-" + NAMESPACES.incrementAndGet();
        KubernetesSandboxDriver driver = KubernetesSandboxDriver.builder().client(client).namespace(ns)
                .owner(context.instanceId()).build();
        return new WithoutProcesses(driver, new FakeKubelet(client, ns, p -> FakeKubelet.Mode.RUN));
    }

    /** Disables the kits' tests that run commands without declaring it through a capability. */
    static final class NeedsRealCluster implements ExecutionCondition {
        static final Map<String, String> EXEC_WITHOUT_CAPABILITY = Map.of(
                "createThenExecAndList", "runs `true` in the new sandbox",
                "survivesReap", "writes and reads a file in the workdir",
                "survivesSpecChange", "writes and reads a file in the workdir",
                "sessionsAreIsolated", "writes and reads files in the workdirs",
                "destroyEmptiesWorkdir", "writes and reads a file in the workdir");

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            String why = context.getTestMethod().map(Method::getName).map(EXEC_WITHOUT_CAPABILITY::get).orElse(null);
            return why == null ? ConditionEvaluationResult.enabled("no exec")
                    : ConditionEvaluationResult.disabled("needs a real cluster: the test " + why
                    + ", and the mock API server has no kubelet to run it (run with -Pkubernetes-it)");
        }
    }

    /** The real driver on the mock, minus the capabilities only a kubelet could deliver. */
    private static final class WithoutProcesses extends ForwardingSandboxDriver {
        private final FakeKubelet kubelet;

        WithoutProcesses(KubernetesSandboxDriver driver, FakeKubelet kubelet) {
            super(driver);
            this.kubelet = kubelet;
        }

        @Override
        public Set<ComputeCapability> computeCapabilities() {
            return Set.of();
        }

        @Override
        public void close() {
            kubelet.close();
            super.close();
        }
    }
}
