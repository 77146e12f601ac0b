package dev.sandboxkit.spring.boot.internal;

import dev.sandboxkit.SandboxConfigurationException;
import dev.sandboxkit.SandboxException;
import dev.sandboxkit.SandboxUnavailableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a sandboxkit failure during startup into Boot's "APPLICATION FAILED TO START" report: the message (which
 * names the property) as the description, and what to do as the action.
 */
public final class SandboxFailureAnalyzer extends AbstractFailureAnalyzer<SandboxException> {

    /** Created by Spring Boot. */
    public SandboxFailureAnalyzer() {
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, SandboxException cause) {
        String action;
        if (cause instanceof SandboxUnavailableException) {
            action = "Start the sandbox engine or point the driver's sandboxkit.* settings at it (sandboxkit.docker.host); or set "
                    + "sandboxkit.fail-fast=false to start without it (health DOWN until it answers).";
        } else if (cause instanceof SandboxConfigurationException) {
            action = "Correct the sandboxkit.* property the description names.";
        } else {
            action = "See the cause; sandboxkit exceptions say whether retrying can help (isRetryable()).";
        }
        return new FailureAnalysis(cause.getMessage(), action, cause);
    }
}
