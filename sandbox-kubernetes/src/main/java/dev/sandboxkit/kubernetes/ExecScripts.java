package dev.sandboxkit.kubernetes;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The two POSIX shell scripts every exec relies on, because the Kubernetes exec API has neither
 * per-exec environment, nor a working directory, nor (in the {@code v4.channel.k8s.io} protocol that
 * fabric8 speaks) a way to close stdin.
 *
 * <p><b>Wrapper.</b> Each command runs as
 * {@code /bin/sh -c WRAPPER sandboxkit-exec <dir> <exec-id> <env-count> <stdin-length|-> argv...}:
 * <ol>
 *   <li>exports {@value #MARKER}{@code =<exec-id>} so that every process of the exec can be found and
 *       killed later;</li>
 *   <li>reads {@code env-count} lines from stdin, one {@code NAME=value} per line with {@code \} and
 *       newline escaped (decoded with {@code printf %b}), and passes them to the command through
 *       {@code env}. Values travel on the private stdin channel, never in the exec URL, which the API
 *       server writes to its audit log: per-exec env may hold secrets;</li>
 *   <li>changes to the working directory (exit 126 if it does not exist, as Docker does);</li>
 *   <li>with stdin, pipes exactly {@code stdin-length} bytes into the command with {@code head -c}, which
 *       gives the command its EOF although the websocket's stdin is never closed; after the command
 *       exits, whatever it did not read is drained so that the whole exec ends only once all stdin has
 *       arrived. Without stdin the command gets {@code /dev/null}.</li>
 * </ol>
 * Needs {@code /bin/sh}, and {@code env}, {@code head}, {@code cat} for the features that use them;
 * busybox and every distribution image have them. Works under dash, bash and busybox ash.
 *
 * <p><b>Kill script.</b> Finds the processes whose environment holds the marker, adds their descendants
 * (even those that cleared their environment) and every member of a process group one of them leads,
 * and SIGKILLs them all in one call, so that no child is reparented out of reach between the scan and
 * the kill. Three rounds catch processes forked meanwhile. PID 1 and the script itself are never
 * touched.
 */
final class ExecScripts {
    static final String MARKER = "SANDBOXKIT_EXEC_ID";
    static final String SHELL = "/bin/sh";

    static final String WRAPPER = String.join("\n",
            "d=$1; " + MARKER + "=$2; export " + MARKER + "; n=$3; len=$4; shift 4",
            "i=0",
            "while [ \"$i\" -lt \"$n\" ]; do",
            "  IFS= read -r l || exit 125",
            "  v=$(printf '%bx' \"$l\"); v=${v%x}",
            "  set -- \"$v\" \"$@\"",
            "  i=$((i+1))",
            "done",
            "cd \"$d\" 2>/dev/null || { printf 'sandboxkit: working directory %s does not exist\\n' \"$d\" >&2; exit 126; }",
            "if [ \"$n\" -gt 0 ]; then set -- env -- \"$@\"; fi",
            "if [ \"$len\" = - ] || [ \"$len\" -eq 0 ]; then exec \"$@\" </dev/null; fi",
            // The shell reports a command killed by a signal ("Killed") on its own stderr, even past redirections
            // on the command (dash applies those in the shell); an exec without stdin (exec'd above) reports
            // nothing, so the shell's stderr is muted and the command gets the real one in its subshell.
            "head -c \"$len\" | { exec 9>&2 2>/dev/null; ( exec \"$@\" 2>&9 9>&- ); r=$?; cat >/dev/null; exit \"$r\"; }");

    /**
     * {@code /bin/sh -c TTY_WRAPPER sandboxkit-tty <dir> <exec-id> <columns> <rows> argv...}: the wrapper for a
     * command on a terminal, without env lines and stdin staging (on a terminal the stdin is typed). Sets the
     * terminal's size from inside first, since a quick command can read it before the resize channel's first
     * message arrives.
     */
    static final String TTY_WRAPPER = String.join("\n",
            "d=$1; " + MARKER + "=$2; export " + MARKER + "; stty cols \"$3\" rows \"$4\" 2>/dev/null; shift 4",
            "cd \"$d\" 2>/dev/null || { printf 'sandboxkit: working directory %s does not exist\\n' \"$d\" >&2; exit 126; }",
            "exec \"$@\"");

    static final String KILL_SCRIPT = String.join("\n",
            "m=\"" + MARKER + "=$1\"; me=$$; n=0",
            "for round in 1 2 3; do",
            "  tab=; hit=' '",
            "  for p in /proc/[0-9]*; do",
            "    pid=${p#/proc/}",
            "    case \"$pid\" in 1|\"$me\") continue ;; esac",
            "    s=$(cat \"$p/stat\" 2>/dev/null) || continue",
            "    s=${s##*) }; set -- $s",
            "    tab=\"$tab $pid:$2:$3\"",
            "    if tr '\\0' '\\n' 2>/dev/null <\"$p/environ\" | grep -qxF \"$m\"; then hit=\"$hit$pid \"; fi",
            "  done",
            "  [ \"$hit\" = ' ' ] && break",
            "  grew=1",
            "  while [ \"$grew\" = 1 ]; do",
            "    grew=0",
            "    for e in $tab; do",
            "      pid=${e%%:*}; r=${e#*:}; pp=${r%%:*}",
            "      case \"$hit\" in *\" $pid \"*) continue ;; esac",
            "      case \"$hit\" in *\" $pp \"*) hit=\"$hit$pid \"; grew=1 ;; esac",
            "    done",
            "  done",
            "  for e in $tab; do",
            "    pid=${e%%:*}; g=${e##*:}",
            "    case \"$hit\" in *\" $pid \"*) continue ;; esac",
            "    case \"$hit\" in *\" $g \"*) hit=\"$hit$pid \" ;; esac",
            "  done",
            "  kill -9 $hit 2>/dev/null",
            "  n=$((n + $(echo $hit | wc -w)))",
            "done",
            "echo \"sandboxkit: killed $n process(es)\"");

    private ExecScripts() {
    }

    /**
     * The argv sent to the exec API.
     *
     * @param workingDir  absolute directory to start in
     * @param execId      the marker value
     * @param envCount    number of env lines sent first on stdin
     * @param stdinLength number of stdin bytes after them, or {@code -1} for none
     * @param command     the user's argv
     */
    static List<String> wrap(String workingDir, String execId, int envCount, int stdinLength, List<String> command) {
        return wrapped(WRAPPER, "sandboxkit-exec", command, workingDir, execId, Integer.toString(envCount),
                stdinLength < 0 ? "-" : Integer.toString(stdinLength));
    }

    /** The argv of a command on a terminal ({@link #TTY_WRAPPER}). */
    static List<String> wrapTty(String workingDir, String execId, int columns, int rows, List<String> command) {
        return wrapped(TTY_WRAPPER, "sandboxkit-tty", command, workingDir, execId, Integer.toString(columns),
                Integer.toString(rows));
    }

    /** {@code /bin/sh -c <script> <name> <parameters...> <command...>}. */
    private static List<String> wrapped(String script, String name, List<String> command, String... parameters) {
        List<String> argv = new ArrayList<>(command.size() + parameters.length + 4);
        argv.add(SHELL);
        argv.add("-c");
        argv.add(script);
        argv.add(name);
        argv.addAll(List.of(parameters));
        argv.addAll(command);
        return argv;
    }

    /** The argv of the kill exec. */
    static String[] kill(String execId) {
        return new String[] {SHELL, "-c", KILL_SCRIPT, "sandboxkit-kill", execId};
    }

    /** Env lines for the wrapper: {@code NAME=value\n} each, backslash and newline escaped for {@code printf %b}. */
    static byte[] envHeader(Map<String, String> env) {
        if (env.isEmpty()) {
            return new byte[0];
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        // Sorted only so that the bytes are reproducible (tests match them exactly).
        for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
            String line = escape(e.getKey()) + "=" + escape(e.getValue()) + "\n";
            out.writeBytes(line.getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    private static String escape(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                sb.append("\\\\");
            } else if (c == '\n') {
                sb.append("\\n");
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}
