package dev.sandboxkit.langchain4j;

import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxUnavailableException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The line the model reads for an operator failure, from the exception messages engines produce. */
class OperatorFailureTest {

    @Test
    void anEnginesRawJsonAnswerIsReducedToItsMessageOnOneLine() {
        OperatorFailure f = OperatorFailure.of("run_command", new SandboxAcquireException(
                "Status 404: {\"message\":\"no such image: x:1: No such image: x:1\"}\n", null));

        assertThat(f.getMessage()).isEqualTo("run_command failed: the sandbox could not be started: no such image: x:1: "
                + "No such image: x:1. Only the operator can fix this (the sandbox's image, engine or resources); tell "
                + "the user, retrying will not help.");
        assertThat(f.getStackTrace()).isEmpty();
        assertThat(f.getCause()).isNull();
    }

    @Test
    void aRetryableFailureSaysSoAndKeepsTheOriginal() {
        SandboxUnavailableException down = new SandboxUnavailableException("Docker engine at unix:///x.sock is "
                + "unreachable:\n  connection refused", null);
        OperatorFailure f = OperatorFailure.of("read_file", down);

        assertThat(f.getMessage()).isEqualTo("read_file failed: the sandbox engine cannot be reached: Docker engine at "
                + "unix:///x.sock is unreachable: connection refused. Only the operator can fix this (start the engine "
                + "or correct its address); tell the user, or try again later.");
        assertThat(f.isRetryable()).isTrue();
        assertThat(f.original()).isSameAs(down);
        assertThat(OperatorFailure.of("read_file", f)).isSameAs(f);
    }
}
