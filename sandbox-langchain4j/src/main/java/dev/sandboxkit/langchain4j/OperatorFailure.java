package dev.sandboxkit.langchain4j;

import dev.sandboxkit.SandboxAcquireException;
import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxExecException;
import dev.sandboxkit.SandboxFileException;
import dev.sandboxkit.SandboxNotFoundException;
import dev.sandboxkit.SandboxTimeoutException;
import dev.sandboxkit.SandboxUnavailableException;
import dev.sandboxkit.SessionStoreException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A failure only an operator can fix, as the model and LangChain4j's default error handling see it: one line that
 * says what failed and what the operator has to do. It has no stack trace and no cause, so LangChain4j's default
 * handler, which logs what a tool threw, logs one line; the original exception, with its trace, is logged at debug
 * here and rethrown by {@link SandboxToolProvider#errorHandler()}.
 */
final class OperatorFailure extends SandboxException {
    private static final long serialVersionUID = 1L;
    private static final Logger log = LoggerFactory.getLogger(OperatorFailure.class);
    /** A JSON error body as engines answer it: {"message":"..."}, possibly with other fields around it. */
    private static final Pattern JSON_MESSAGE =
            Pattern.compile("\\{[^{}]*\"message\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"[^{}]*}");
    private static final Pattern HTTP_STATUS = Pattern.compile("\\bStatus \\d{3}: ");
    private static final int MAX_DETAIL = 300;

    private final transient SandboxException original;

    private OperatorFailure(String message, SandboxException original) {
        super(message);
        this.original = original;
    }

    /**
     * The model's view of an operator failure of one tool call; logs the original at debug.
     *
     * @param tool     the tool the model called
     * @param original what the tool set threw
     * @return the failure to throw to LangChain4j
     */
    static OperatorFailure of(String tool, SandboxException original) {
        if (original instanceof OperatorFailure f) {
            return f;
        }
        log.debug("{} failed with an operator failure", tool, original);
        String detail = detail(original.getMessage());
        Kind kind = Kind.of(original);
        return new OperatorFailure(tool + " failed: " + kind.what() + (detail.isEmpty() ? "" : ": " + detail)
                + ". Only the operator can fix this (" + kind.fix() + "); tell the user"
                + (original.isRetryable() ? ", or try again later." : ", retrying will not help."), original);
    }

    /**
     * The exception the tool set threw.
     *
     * @return the original, with its stack trace and cause
     */
    SandboxException original() {
        return original;
    }

    @Override
    public boolean isRetryable() {
        return original.isRetryable();
    }

    /** No stack trace: it would point into LangChain4j's tool loop, and the original's is logged at debug. */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }

    /** What failed, and what the operator has to fix, by kind of failure. */
    private record Kind(String what, String fix) {
        static Kind of(SandboxException e) {
            if (e instanceof SandboxUnavailableException) {
                return new Kind("the sandbox engine cannot be reached", "start the engine or correct its address");
            } else if (e instanceof SandboxAcquireException) {
                return new Kind("the sandbox could not be started", "the sandbox's image, engine or resources");
            } else if (e instanceof SessionStoreException) {
                return new Kind("the sandbox session store failed", "the session store");
            } else if (e instanceof SandboxTimeoutException) {
                return new Kind("a sandbox step timed out", "the sandbox engine");
            } else if (e instanceof SandboxExecException) {
                return new Kind("the command could not be run in the sandbox", "the sandbox engine");
            } else if (e instanceof SandboxFileException) {
                return new Kind("the workspace could not be accessed on the host", "the workspace directory on the host");
            } else if (e instanceof SandboxNotFoundException) {
                return new Kind("the sandbox is gone", "the sandbox engine");
            } else if (e instanceof SandboxConfigurationException) {
                return new Kind("the sandbox is misconfigured", "the sandbox configuration");
            }
            return new Kind("the sandbox failed", "the sandbox engine");
        }
    }

    /** The original message on one line, with an engine's raw JSON answer reduced to its message. */
    static String detail(String message) {
        if (message == null) {
            return "";
        }
        String m = HTTP_STATUS.matcher(message).replaceAll("");
        Matcher json = JSON_MESSAGE.matcher(m);
        StringBuilder out = new StringBuilder();
        while (json.find()) {
            json.appendReplacement(out, Matcher.quoteReplacement(json.group(1).replaceAll("\\\\(.)", "$1")));
        }
        json.appendTail(out);
        String line = out.toString().replaceAll("\\s+", " ").strip();
        while (line.endsWith(".")) {
            line = line.substring(0, line.length() - 1);
        }
        return line.length() <= MAX_DETAIL ? line : line.substring(0, MAX_DETAIL - 3) + "...";
    }
}
