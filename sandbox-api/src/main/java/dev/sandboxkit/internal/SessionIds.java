package dev.sandboxkit.internal;

/** Session and instance id rules. Ids become directory names and label values, so they are strict. */
final class SessionIds {
    static final int MAX_LENGTH = 128;

    private SessionIds() {
    }

    /** Rejects ids that could escape the workspace root or break labels: '/', '..', NUL, overlong. */
    static String requireValid(String sessionId) {
        if (sessionId == null) {
            throw new NullPointerException("sessionId");
        }
        int n = sessionId.length();
        if (n == 0 || n > MAX_LENGTH) {
            throw new IllegalArgumentException("session id must be 1-" + MAX_LENGTH + " characters, got " + n);
        }
        if (!isLetterOrDigit(sessionId.charAt(0))) {
            throw new IllegalArgumentException("session id must start with a letter or digit: " + printable(sessionId));
        }
        for (int i = 1; i < n; i++) {
            char c = sessionId.charAt(i);
            if (!isLetterOrDigit(c) && ".-_:@+=".indexOf(c) < 0) {
                throw new IllegalArgumentException("session id may only contain [A-Za-z0-9._:@+=-]: "
                        + printable(sessionId));
            }
        }
        return sessionId;
    }

    static String requireValidInstanceId(String id) {
        if (id.isEmpty() || id.length() > 63 || !id.matches("[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")) {
            throw new IllegalArgumentException("instance id must be 1-63 characters [A-Za-z0-9._-], "
                    + "starting and ending alphanumeric: " + printable(id));
        }
        return id;
    }

    private static boolean isLetterOrDigit(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }

    private static String printable(String s) {
        String cut = s.length() > 40 ? s.substring(0, 40) + "..." : s;
        return '"' + cut.replace("\0", "\\0") + '"';
    }
}
