package dev.sandboxkit.internal;

import dev.sandboxkit.ExecRequest;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** How a shell session turns a request into the script its shell runs. */
class ManagedShellSessionScriptTest {

    @Test
    void aShellRequestRunsItsScript() {
        assertThat(ManagedShellSession.script(ExecRequest.shell("cd src && ls").command())).isEqualTo("cd src && ls");
    }

    @Test
    void anyOtherArgvBecomesOneQuotedSimpleCommand() {
        assertThat(ManagedShellSession.script(List.of("cd", "my dir"))).isEqualTo("'cd' 'my dir'");
        assertThat(ManagedShellSession.script(List.of("echo", "it's", "$HOME"))).isEqualTo("'echo' 'it'\\''s' '$HOME'");
        assertThat(ManagedShellSession.script(List.of("/bin/sh", "-c", "x", "extra"))).startsWith("'/bin/sh'");
    }
}
