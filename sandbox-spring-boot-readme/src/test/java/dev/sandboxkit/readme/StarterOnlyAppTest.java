package dev.sandboxkit.readme;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application whose only dependency is the starter, started in a child JVM on exactly the starter's class path:
 * it must say what it does, and above all why it does not start.
 */
class StarterOnlyAppTest {
    private static final String MAIN = "dev.sandboxkit.readme.bare.StarterOnlyApplication";

    @TempDir
    Path root;

    private ChildJvm.Run run(String... more) throws Exception {
        List<String> args = new ArrayList<>(ChildJvm.baseArgs(root));
        args.addAll(List.of(more));
        return ChildJvm.run("sandboxkit.readme.starterOnlyClasspath", MAIN, args);
    }

    @Test
    void aBadPropertyStopsTheStartupWithBootsReport() throws Exception {
        ChildJvm.Run run = run("--sandboxkit.idle-timeout=-5s");

        assertThat(run.exitCode()).as(run.output()).isNotZero();
        assertThat(run.output()).contains("APPLICATION FAILED TO START")
                .contains("sandboxkit.idle-timeout: expected a duration (30s, 10m, 1h30m, 500ms, PT30S), got '-5s'")
                .contains("Correct the sandboxkit.* property the description names.");
    }

    @Test
    void aGoodStartIsLogged() throws Exception {
        ChildJvm.Run run = run();

        assertThat(run.exitCode()).as(run.output()).isZero();
        assertThat(run.output()).contains("Sandbox manager ").contains(" started: driver=docker")
                .contains("Started StarterOnlyApplication");
    }
}
