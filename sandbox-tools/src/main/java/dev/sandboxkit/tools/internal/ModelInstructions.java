package dev.sandboxkit.tools.internal;

import dev.sandboxkit.SandboxSpec;

import java.time.Duration;

/**
 * The text an agent framework puts in its system prompt (seed 000: tell the model what persists). It never
 * mentions the files API: that belongs to the application; the model only sees its effects as files appearing
 * in, or being read from, the workdir.
 */
public final class ModelInstructions {
    private ModelInstructions() {
    }

    /**
     * The sandbox's rules for a model.
     *
     * @param spec        the spec the conversation's sandbox runs
     * @param idleTimeout the manager's idle TTL
     * @return plain text, a few lines
     */
    public static String render(SandboxSpec spec, Duration idleTimeout) {
        StringBuilder b = new StringBuilder();
        b.append("You are working in a sandboxed Linux environment.\n");
        if (spec.ephemeral()) {
            b.append("- Your working directory is ").append(SandboxSpec.WORKSPACE).append(". This sandbox is single-use: "
                    + "everything in it, including ").append(SandboxSpec.WORKSPACE)
                    .append(", is deleted when the task ends. Return any result you need in your answer.\n");
        } else {
            b.append("- Your working directory is ").append(SandboxSpec.WORKSPACE).append(". Only files inside ")
                    .append(SandboxSpec.WORKSPACE).append(" are kept. Everything else is lost when the sandbox "
                    + "restarts: files elsewhere (including /tmp), installed packages outside ")
                    .append(SandboxSpec.WORKSPACE).append(", running and background processes, and environment changes.\n");
            b.append("- After ").append(human(idleTimeout)).append(" without activity the sandbox is stopped; your next "
                    + "command restarts it automatically with ").append(SandboxSpec.WORKSPACE).append(" intact.\n");
        }
        // The host reads and writes /workspace through the files API, which the model cannot call or see.
        b.append("- Input files given to you are placed in ").append(SandboxSpec.WORKSPACE).append(", and the ")
                .append("application collects your results from there; you have no separate upload or download tool. "
                        + "Save files meant for the user as regular files in ").append(SandboxSpec.WORKSPACE)
                .append(" (symbolic links, pipes and device files are not collected).\n");
        if (spec.maxLifetime() != null) {
            b.append("- A sandbox runs for at most ").append(human(spec.maxLifetime()))
                    .append("; longer work is cut off, so save progress to files as you go.\n");
        }
        b.append("- Each command runs in a fresh shell: `cd` and `export` do not carry over to the next command. "
                + "Use paths relative to ").append(SandboxSpec.WORKSPACE).append(" or chain commands with `&&`.\n");
        b.append("- Commands run as an unprivileged user without sudo, so system package managers do not work; "
                + "install tools inside ").append(SandboxSpec.WORKSPACE).append(" if they must survive a restart.\n");
        if (spec.egress() != null) {
            b.append(spec.egress().rules().isEmpty()
                    ? "- There is no network access: every host is refused (HTTP 403).\n"
                    : "- The only network access is HTTP(S) through a proxy (already configured in the environment) to: "
                    + spec.egress().describe() + ". Other hosts are refused with HTTP 403, and DNS lookups fail, "
                    + "so use tools that honour HTTP_PROXY/HTTPS_PROXY (pip, npm, git, curl, wget).\n");
        } else if ("none".equals(spec.network())) {
            b.append("- There is no network access.\n");
        } else if (spec.proxy() != null) {
            b.append("- Network access goes through a proxy (already configured in the environment).\n");
        }
        return b.toString();
    }

    private static String human(Duration d) {
        if (d.toMinutes() >= 1 && d.toSecondsPart() == 0) {
            long h = d.toHours();
            long m = d.toMinutesPart();
            return h > 0 ? h + (h == 1 ? " hour" : " hours") + (m > 0 ? " " + m + " minutes" : "")
                    : m + (m == 1 ? " minute" : " minutes");
        }
        return d.toSeconds() + " seconds";
    }
}
