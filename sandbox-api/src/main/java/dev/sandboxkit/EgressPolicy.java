package dev.sandboxkit;

import java.math.BigInteger;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * Which hosts a sandbox may reach through its egress proxy. Immutable; {@link #denyAll()} is the default.
 * Host rules match an exact name or, written {@code *.domain}, any subdomain at any depth but not the apex.
 * Anything that parses as an IP address in any {@code inet_aton} spelling ({@code 2130706433},
 * {@code 0x7f.1}, {@code 127.1}) is a literal and only CIDR rules match it.
 */
public final class EgressPolicy {

    private static final EgressPolicy DENY_ALL = new EgressPolicy(List.of());

    private final List<Rule> rules;

    private EgressPolicy(List<Rule> rules) {
        this.rules = List.copyOf(rules);
    }

    /**
     * The policy that allows nothing.
     *
     * @return the deny-all policy
     */
    public static EgressPolicy denyAll() {
        return DENY_ALL;
    }

    /**
     * Starts a policy.
     *
     * @return an empty builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Parses a comma-separated list such as {@code pypi.org,*.pythonhosted.org,github.com:443,10.0.0.0/8}.
     * Blank input gives {@link #denyAll()}.
     *
     * @param commaSeparated the entries
     * @return the policy
     * @throws SandboxConfigurationException naming the first bad entry
     */
    public static EgressPolicy parse(String commaSeparated) {
        Objects.requireNonNull(commaSeparated, "commaSeparated");
        Builder b = builder();
        for (String raw : commaSeparated.split(",", -1)) {
            String entry = raw.strip();
            if (entry.isEmpty()) {
                if (commaSeparated.isBlank()) {
                    continue;
                }
                throw new SandboxConfigurationException("empty egress entry in '" + commaSeparated + "'");
            }
            b.rules.add(Rule.parse(entry));
        }
        return b.build();
    }

    /**
     * Decides a connection to {@code host:port}.
     *
     * @param host name or IP literal as the sandbox asked for it (brackets allowed around IPv6)
     * @param port port asked for
     * @return empty if allowed, else the one-line reason
     */
    public Optional<String> decide(String host, int port) {
        Objects.requireNonNull(host, "host");
        String target = host + ":" + port;
        Optional<InetAddress> literal = literal(host);
        if (literal.isPresent()) {
            return allowsAddress(literal.get(), port) ? Optional.empty()
                    : Optional.of("egress to " + target + " is not allowed (IP literal); allowed: " + describe());
        }
        Optional<String> name = normalizeName(host);
        if (name.isEmpty()) {
            return Optional.of("egress to " + target + " is not allowed (malformed host); allowed: " + describe());
        }
        for (Rule r : rules) {
            if (r.matchesName(name.get(), port)) {
                return Optional.empty();
            }
        }
        return Optional.of("egress to " + target + " is not allowed; allowed: " + describe());
    }

    /**
     * Whether a CIDR rule allows this address and port (used for resolved addresses and literals).
     *
     * @param address the address
     * @param port    the port
     * @return true if a CIDR rule covers it
     */
    public boolean allowsAddress(InetAddress address, int port) {
        for (Rule r : rules) {
            if (r.matchesAddress(address, port)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The allowed entries for messages and model instructions, e.g. {@code pypi.org, github.com:443}.
     *
     * @return the list, or {@code nothing (all egress denied)}
     */
    public String describe() {
        return rules.isEmpty() ? "nothing (all egress denied)"
                : rules.stream().map(Rule::toString).collect(Collectors.joining(", "));
    }

    /**
     * Parses {@code host} as an IP address literal in any {@code inet_aton} spelling (decimal, octal, hex,
     * 1 to 4 parts) or as a bracketed or bare IPv6 literal.
     *
     * @param host the host as asked
     * @return the address, or empty if it is not a literal
     */
    public static Optional<InetAddress> literal(String host) {
        String h = host;
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        if (h.contains(":")) {
            if (!h.matches("[0-9A-Fa-f:.]+")) {
                return Optional.empty();
            }
            try {
                return Optional.of(InetAddress.getByName(h)); // IPv6 literal: no DNS lookup
            } catch (UnknownHostException | RuntimeException e) {
                return Optional.empty();
            }
        }
        String[] parts = h.split("\\.", -1);
        if (parts.length < 1 || parts.length > 4) {
            return Optional.empty();
        }
        long[] v = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            BigInteger n = number(parts[i]);
            if (n == null || n.bitLength() > 32) {
                return Optional.empty();
            }
            v[i] = n.longValue();
        }
        long addr = 0;
        int last = parts.length - 1;
        for (int i = 0; i < last; i++) {
            if (v[i] > 255) {
                return Optional.empty();
            }
            addr |= v[i] << (24 - 8 * i);
        }
        long lastMax = (1L << (8 * (4 - last))) - 1;
        if (v[last] > lastMax) {
            return Optional.empty();
        }
        addr |= v[last];
        byte[] b = {(byte) (addr >>> 24), (byte) (addr >>> 16), (byte) (addr >>> 8), (byte) addr};
        try {
            return Optional.of(InetAddress.getByAddress(b));
        } catch (UnknownHostException e) {
            return Optional.empty();
        }
    }

    private static @Nullable BigInteger number(String s) {
        try {
            if (s.matches("0[xX][0-9A-Fa-f]*")) {
                return s.length() == 2 ? BigInteger.ZERO : new BigInteger(s.substring(2), 16);
            }
            if (s.matches("0[0-7]+")) {
                return new BigInteger(s.substring(1), 8);
            }
            if (s.matches("[0-9]+")) {
                return new BigInteger(s);
            }
        } catch (NumberFormatException e) {
            return null;
        }
        return null;
    }

    /** Lower-cases, strips one trailing dot, and rejects anything that is not a plain DNS name. */
    static Optional<String> normalizeName(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        if (h.isEmpty() || h.length() > 253 || !h.matches("[a-z0-9_-]+(\\.[a-z0-9_-]+)*")) {
            return Optional.empty();
        }
        return Optional.of(h);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EgressPolicy p && p.rules.equals(rules);
    }

    @Override
    public int hashCode() {
        return rules.hashCode();
    }

    @Override
    public String toString() {
        return "EgressPolicy[" + describe() + "]";
    }

    /** Collects rules for an {@link EgressPolicy}. Not thread-safe. */
    public static final class Builder {

        private final List<Rule> rules = new ArrayList<>();

        private Builder() {
        }

        /**
         * Allows a host on any port: an exact name, or {@code *.domain} for its subdomains (not the apex).
         *
         * @param host the name
         * @return this
         * @throws SandboxConfigurationException if the name is malformed or an IP literal
         */
        public Builder allowHost(String host) {
            rules.add(Rule.host(host, 0));
            return this;
        }

        /**
         * Allows a host on one port.
         *
         * @param host the name, as in {@link #allowHost(String)}
         * @param port 1 to 65535
         * @return this
         * @throws SandboxConfigurationException if the name or port is malformed
         */
        public Builder allowHost(String host, int port) {
            rules.add(Rule.host(host, checkPort(port, host)));
            return this;
        }

        /**
         * Allows a literal IPv4 or IPv6 range on any port, e.g. {@code 10.0.0.0/8}.
         *
         * @param cidr the range
         * @return this
         * @throws SandboxConfigurationException if malformed
         */
        public Builder allowCidr(String cidr) {
            rules.add(Rule.cidr(cidr, 0));
            return this;
        }

        /**
         * Allows a literal IPv4 or IPv6 range on one port.
         *
         * @param cidr the range
         * @param port 1 to 65535
         * @return this
         * @throws SandboxConfigurationException if malformed
         */
        public Builder allowCidr(String cidr, int port) {
            rules.add(Rule.cidr(cidr, checkPort(port, cidr)));
            return this;
        }

        /**
         * Builds the policy.
         *
         * @return the immutable policy
         */
        public EgressPolicy build() {
            return rules.isEmpty() ? DENY_ALL : new EgressPolicy(rules);
        }
    }

    private static int checkPort(int port, String entry) {
        if (port < 1 || port > 65535) {
            throw new SandboxConfigurationException("bad port " + port + " in egress entry '" + entry + "'");
        }
        return port;
    }

    /** One rule: a name pattern or a CIDR range, with port 0 meaning any port. */
    private record Rule(@Nullable String name, boolean wildcard, byte @Nullable [] network, int prefix, int port) {

        static Rule parse(String entry) {
            String body = entry;
            int port = 0;
            int colon = entry.lastIndexOf(':');
            boolean ipv6 = entry.indexOf(':') != colon; // more than one colon: bare IPv6 CIDR, no port
            if (colon >= 0 && !ipv6) {
                body = entry.substring(0, colon);
                try {
                    port = checkPort(Integer.parseInt(entry.substring(colon + 1)), entry);
                } catch (NumberFormatException e) {
                    throw new SandboxConfigurationException("bad port in egress entry '" + entry + "'");
                }
            }
            return body.contains("/") ? cidr(body, port) : host(body, port);
        }

        static Rule host(String host, int port) {
            Objects.requireNonNull(host, "host");
            boolean wildcard = host.startsWith("*.");
            String rest = wildcard ? host.substring(2) : host;
            if (literal(rest).isPresent()) {
                throw new SandboxConfigurationException(
                        "egress entry '" + host + "' is an IP literal; use a CIDR rule such as " + rest + "/32");
            }
            Optional<String> name = normalizeName(rest);
            if (name.isEmpty()) {
                throw new SandboxConfigurationException("malformed host in egress entry '" + host + "'");
            }
            return new Rule(name.get(), wildcard, null, 0, port);
        }

        static Rule cidr(String cidr, int port) {
            Objects.requireNonNull(cidr, "cidr");
            int slash = cidr.indexOf('/');
            String addr = slash < 0 ? cidr : cidr.substring(0, slash);
            boolean canonical = addr.contains(":") ? addr.matches("[0-9A-Fa-f:.]+")
                    : addr.matches("\\d{1,3}(\\.\\d{1,3}){3}");
            Optional<InetAddress> ip = canonical ? literal(addr) : Optional.empty();
            if (ip.isEmpty()) {
                throw new SandboxConfigurationException("malformed address in egress entry '" + cidr + "'");
            }
            byte[] net = ip.get().getAddress();
            int prefix;
            try {
                prefix = slash < 0 ? net.length * 8 : Integer.parseInt(cidr.substring(slash + 1));
            } catch (NumberFormatException e) {
                throw new SandboxConfigurationException("malformed prefix in egress entry '" + cidr + "'");
            }
            if (prefix < 0 || prefix > net.length * 8) {
                throw new SandboxConfigurationException("prefix out of range in egress entry '" + cidr + "'");
            }
            return new Rule(null, false, mask(net, prefix), prefix, port);
        }

        private static byte[] mask(byte[] a, int prefix) {
            byte[] out = a.clone();
            for (int i = 0; i < out.length; i++) {
                int bits = Math.max(0, Math.min(8, prefix - 8 * i));
                out[i] &= (byte) (0xFF << (8 - bits));
            }
            return out;
        }

        boolean matchesName(String host, int p) {
            if (name == null || (port != 0 && port != p)) {
                return false;
            }
            return wildcard ? host.endsWith("." + name) : host.equals(name);
        }

        boolean matchesAddress(InetAddress a, int p) {
            if (network == null || (port != 0 && port != p)) {
                return false;
            }
            byte[] bytes = a.getAddress();
            return bytes.length == network.length && java.util.Arrays.equals(mask(bytes, prefix), network);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Rule r && Objects.equals(name, r.name) && wildcard == r.wildcard
                    && java.util.Arrays.equals(network, r.network) && prefix == r.prefix && port == r.port;
        }

        @Override
        public int hashCode() {
            return Objects.hash(name, wildcard, java.util.Arrays.hashCode(network), prefix, port);
        }

        @Override
        public String toString() {
            String base;
            if (name != null) {
                base = (wildcard ? "*." : "") + name;
            } else {
                String a;
                try {
                    a = InetAddress.getByAddress(Objects.requireNonNull(network)).getHostAddress();
                } catch (UnknownHostException e) {
                    a = "?";
                }
                base = a + "/" + prefix;
            }
            return port == 0 ? base : base + ":" + port;
        }
    }
}
