package dev.sandboxkit.langchain4j;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What a block writes to System.err, where slf4j-simple logs (it looks System.err up at each record). */
final class StandardErr {
    private StandardErr() {
    }

    static synchronized String capture(Runnable block) {
        PrintStream original = System.err;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            block.run();
        } finally {
            System.setErr(original);
        }
        String captured = bytes.toString(StandardCharsets.UTF_8);
        original.print(captured); // still in the build's output
        return captured;
    }
}
