package dev.sandboxkit;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * Which hosts a sandbox on network {@code none} may reach through the host-side egress proxy. Immutable;
 * the default is {@link #denyAll()}.
 *
 * <p>Rules: an exact host ({@code pypi.org}), a wildcard ({@code *.pythonhosted.org}, any subdomain depth but
 * not the apex), or a CIDR for literal IPs ({@code 10.0.0.0/8}, {@code [2001:db8::]/32}); each with an optional
 * port. Names are lower-cased and a trailing dot is stripped before matching. Anything that parses as an IP in any
 * {@code inet_aton} spelling (decimal {@code 2130706433}, octal {@code 0177.0.0.1}, hex {@code 0x7f.1}, short
 * {@code 127.1}) or as an IPv6 literal is an IP literal and is matched only by CIDR rules.
 *
 * <p>Credential injection, without a man in the middle and without a CA in the sandbox: {@link
 * Builder#header(String, String, String)} adds a header only to plain-HTTP absolute-URI requests for that host
 * ({@code GET http://api.example.com/v1 HTTP/1.1}). With {@link Builder#tlsUpstream(String)} the JVM talks HTTPS to
 * that upstream with its normal certificate checks, so the sandbox sends {@code http://api.example.com/...} to the
 * proxy and the token never enters the sandbox. CONNECT tunnels are never altered.
 */
public final class EgressPolicy {

    private static final EgressPolicy DENY_ALL = new EgressPolicy(List.of(), Map.of(), Set.of());

    private final List<Rule> rules;
    private final Map<String, Map<String, String>> headers;
    private final Set<String> tlsUpstream;

    private EgressPolicy(List<Rule> rules, Map<String, Map<String, String>> headers, Set<String> tlsUpstream) {
        this.rules = List.copyOf(rules);
        Map<String, Map<String, String>> h = new LinkedHashMap<>();
        headers.forEach((k, v) -> h.put(k, Map.copyOf(v)));
        this.headers = Map.copyOf(h);
        this.tlsUpstream = Set.copyOf(tlsUpstream);
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
     * @return a builder with no rules
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Parses a comma-separated list of rules, as given to the Boot properties and the MCP flags.
     *
     * @param commaSeparated e.g. {@code "pypi.org, *.pythonhosted.org, github.com:443, 10.0.0.0/8"}
     * @return the policy
     * @throws SandboxConfigurationException naming the first bad entry
     */
    public static EgressPolicy parse(String commaSeparated) {
        Objects.requireNonNull(commaSeparated, "commaSeparated");
        return parse(Arrays.asList(commaSeparated.split(",")));
    }

    /**
     * Parses rules, one per entry; blank entries are skipped.
     *
     * @param entries e.g. {@code pypi.org}, {@code *.pythonhosted.org}, {@code github.com:443},
     *                {@code 10.0.0.0/8}, {@code [2001:db8::]/32:443}
     * @return the policy
     * @throws SandboxConfigurationException naming the first bad entry
     */
    public static EgressPolicy parse(List<String> entries) {
        Builder b = builder();
        for (String raw : entries) {
            String e = raw == null ? "" : raw.strip();
            if (e.isEmpty()) {
                continue;
            }
            try {
                b.rules.add(Rule.parse(e));
            } catch (IllegalArgumentException ex) {
                throw new SandboxConfigurationException("bad egress rule '" + e + "': " + ex.getMessage(), ex);
            }
        }
        return b.build();
    }

    /**
     * The rules in the spelling {@link #parse(List)} reads back (headers are not included: they hold secrets).
     *
     * @return rule strings, in order
     */
    public List<String> rules() {
        return rules.stream().map(Rule::toString).collect(Collectors.toUnmodifiableList());
    }

    /**
     * The rules for people and models, e.g. {@code "pypi.org, *.pythonhosted.org:443"}, or {@code "nothing"}.
     *
     * @return a one-line description
     */
    public String describe() {
        return rules.isEmpty() ? "nothing" : String.join(", ", rules());
    }

    /**
     * Whether a connection to a host (a name or an IP literal in any spelling) and port is allowed.
     *
     * @param host name or IP literal, as the sandbox spelled it
     * @param port port, 1..65535
     * @return true if a rule allows it
     */
    public boolean allows(String host, int port) {
        return decide(host, port).isEmpty();
    }

    /**
     * Decides a connection.
     *
     * @param host name or IP literal, as the sandbox spelled it
     * @param port port
     * @return empty if allowed, else a one-line reason naming the host, port and allow-list
     */
    public Optional<String> decide(String host, int port) {
        if (port < 1 || port > 65535) {
            return Optional.of("port " + port + " is out of range");
        }
        Optional<byte[]> ip = parseIpLiteral(host);
        if (ip.isPresent()) {
            return allowsAddress(ip.get(), port) ? Optional.empty()
                    : Optional.of("IP literal " + host + ":" + port + " is not in a CIDR rule of this sandbox's "
                    + "egress allow-list (allowed: " + describe() + ")");
        }
        Optional<String> name = normalizeName(host);
        if (name.isEmpty()) {
            return Optional.of("'" + host + "' is not a valid host name");
        }
        for (Rule r : rules) {
            if (r.matchesName(name.get(), port)) {
                return Optional.empty();
            }
        }
        return Optional.of(name.get() + ":" + port + " is not in this sandbox's egress allow-list (allowed: "
                + describe() + ")");
    }

    /**
     * Whether a CIDR rule allows a resolved address; used to guard against DNS answers pointing at loopback.
     *
     * @param address resolved address
     * @param port    port
     * @return true if a CIDR rule contains it
     */
    public boolean allowsAddress(InetAddress address, int port) {
        return allowsAddress(address.getAddress(), port);
    }

    private boolean allowsAddress(byte[] addr, int port) {
        for (Rule r : rules) {
            if (r.matchesAddress(addr, port)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Headers to add to plain-HTTP requests for a host.
     *
     * @param host host name (normalized here)
     * @return header name to value; empty if none
     */
    public Map<String, String> headersFor(String host) {
        return normalizeName(host).map(h -> headers.getOrDefault(h, Map.of())).orElse(Map.of());
    }

    /**
     * Every injected header, by exact host: what a store needs to rebuild the policy.
     *
     * @return host to header name to value (values are credentials: never log them)
     */
    public Map<String, Map<String, String>> headers() {
        return headers;
    }

    /**
     * The hosts named by {@link Builder#tlsUpstream(String)}.
     *
     * @return exact host names
     */
    public Set<String> tlsUpstreamHosts() {
        return tlsUpstream;
    }

    /**
     * Whether the proxy talks TLS to this host for plain-HTTP requests the sandbox sends.
     *
     * @param host host name (normalized here)
     * @return true if {@link Builder#tlsUpstream(String)} named it
     */
    public boolean tlsUpstream(String host) {
        return normalizeName(host).map(tlsUpstream::contains).orElse(false);
    }

    static Optional<String> normalizeName(String host) {
        if (host == null) {
            return Optional.empty();
        }
        String h = host.toLowerCase(Locale.ROOT);
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        if (h.isEmpty() || h.length() > 253
                || !h.matches("[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")) {
            return Optional.empty();
        }
        return Optional.of(h);
    }

    /**
     * Parses an IP literal in any {@code inet_aton} spelling, or an IPv6 literal (bracketed or not), without DNS.
     *
     * @param host as spelled
     * @return the address (IPv4-mapped IPv6 comes back as IPv4), or empty if it is not an IP literal
     */
    public static Optional<InetAddress> literal(String host) {
        return parseIpLiteral(host).map(b -> {
            try {
                return InetAddress.getByAddress(b);
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static Optional<byte[]> parseIpLiteral(String host) {
        if (host == null || host.isEmpty()) {
            return Optional.empty();
        }
        String h = host;
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        if (h.contains(":")) {
            // only literal characters, so getByName never queries DNS
            if (!h.matches("[0-9A-Fa-f:.]+")) {
                return Optional.empty();
            }
            try {
                return Optional.of(InetAddress.getByName(h).getAddress());
            } catch (UnknownHostException e) {
                return Optional.empty();
            }
        }
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        String[] parts = h.split("\\.", -1);
        if (parts.length > 4) {
            return Optional.empty();
        }
        long[] v = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i].toLowerCase(Locale.ROOT);
            try {
                if (p.startsWith("0x")) {
                    v[i] = p.length() == 2 ? 0 : Long.parseLong(p.substring(2), 16);
                } else if (p.length() > 1 && p.startsWith("0")) {
                    v[i] = Long.parseLong(p.substring(1), 8);
                } else if (!p.isEmpty() && p.chars().allMatch(Character::isDigit)) {
                    v[i] = Long.parseLong(p);
                } else {
                    return Optional.empty();
                }
            } catch (NumberFormatException e) {
                return Optional.empty();
            }
        }
        long addr = 0;
        for (int i = 0; i < v.length - 1; i++) {
            if (v[i] > 255) {
                return Optional.empty();
            }
            addr = (addr << 8) | v[i];
        }
        int restBytes = 4 - (v.length - 1);
        long last = v[v.length - 1];
        if (last >= (1L << (8 * restBytes))) {
            return Optional.empty();
        }
        addr = (addr << (8 * restBytes)) | last;
        return Optional.of(new byte[] {(byte) (addr >>> 24), (byte) (addr >>> 16), (byte) (addr >>> 8), (byte) addr});
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EgressPolicy p && rules.equals(p.rules) && headers.equals(p.headers)
                && tlsUpstream.equals(p.tlsUpstream);
    }

    @Override
    public int hashCode() {
        return Objects.hash(rules, headers, tlsUpstream);
    }

    /** Header values are redacted: they are credentials. */
    @Override
    public String toString() {
        Map<String, List<String>> names = new LinkedHashMap<>();
        headers.forEach((h, m) -> names.put(h, new ArrayList<>(m.keySet())));
        return "EgressPolicy[rules=" + rules() + ", headers=" + names + " (values redacted), tlsUpstream="
                + tlsUpstream + "]";
    }

    /** Builds an {@link EgressPolicy}. Not thread-safe. */
    public static final class Builder {
        private final List<Rule> rules = new ArrayList<>();
        private final Map<String, Map<String, String>> headers = new LinkedHashMap<>();
        private final Set<String> tlsUpstream = new LinkedHashSet<>();

        private Builder() {
        }

        /**
         * Adds one rule in the spelling {@link EgressPolicy#parse(List)} reads.
         *
         * @param rule e.g. {@code pypi.org}, {@code *.pythonhosted.org:443}, {@code 10.0.0.0/8}
         * @return this
         * @throws SandboxConfigurationException if the rule is not valid
         */
        public Builder allow(String rule) {
            rules.addAll(parse(List.of(Objects.requireNonNull(rule, "rule"))).rules);
            return this;
        }

        /**
         * Allows a host on any port.
         *
         * @param host exact name or {@code *.domain}
         * @return this
         * @throws SandboxConfigurationException if the host is not valid
         */
        public Builder allowHost(String host) {
            return allowHost(host, 0);
        }

        /**
         * Allows a host on one port.
         *
         * @param host exact name or {@code *.domain}
         * @param port 1..65535, or 0 for any
         * @return this
         * @throws SandboxConfigurationException if the host or port is not valid
         */
        public Builder allowHost(String host, int port) {
            return add(host, port, false);
        }

        /**
         * Allows literal IPs in a range on any port.
         *
         * @param cidr e.g. {@code 10.0.0.0/8} or {@code 2001:db8::/32}
         * @return this
         * @throws SandboxConfigurationException if the CIDR is not valid
         */
        public Builder allowCidr(String cidr) {
            return allowCidr(cidr, 0);
        }

        /**
         * Allows literal IPs in a range on one port.
         *
         * @param cidr e.g. {@code 10.0.0.0/8} or {@code 2001:db8::/32}
         * @param port 1..65535, or 0 for any
         * @return this
         * @throws SandboxConfigurationException if the CIDR or port is not valid
         */
        public Builder allowCidr(String cidr, int port) {
            return add(cidr, port, true);
        }

        private Builder add(String spec, int port, boolean cidr) {
            Objects.requireNonNull(spec, "host");
            try {
                rules.add(cidr ? Rule.cidr(spec, port) : Rule.host(spec, port));
                return this;
            } catch (IllegalArgumentException e) {
                throw new SandboxConfigurationException("bad egress rule '" + spec + "': " + e.getMessage(), e);
            }
        }

        /**
         * Adds a header to plain-HTTP requests the proxy forwards to an exact host; see the class comment.
         *
         * @param host  exact host name
         * @param name  header name
         * @param value header value (a credential; never shown by {@link #toString()})
         * @return this
         * @throws SandboxConfigurationException if the host or header is not valid
         */
        public Builder header(String host, String name, String value) {
            String h = exactHost(host);
            if (name == null || !name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
                throw new SandboxConfigurationException("bad egress header name '" + name + "'");
            }
            if (value == null || value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
                throw new SandboxConfigurationException("bad egress header value for '" + name + "'");
            }
            headers.computeIfAbsent(h, k -> new LinkedHashMap<>()).put(name, value);
            return this;
        }

        /**
         * Makes the proxy use TLS (with the JVM's normal certificate checks) to an exact host for plain-HTTP
         * requests the sandbox sends it, so injected headers never cross the network in clear.
         *
         * @param host exact host name
         * @return this
         * @throws SandboxConfigurationException if the host is not valid
         */
        public Builder tlsUpstream(String host) {
            tlsUpstream.add(exactHost(host));
            return this;
        }

        private static String exactHost(String host) {
            return normalizeName(host).filter(h -> parseIpLiteral(h).isEmpty())
                    .orElseThrow(() -> new SandboxConfigurationException("bad egress host '" + host + "'"));
        }

        /**
         * Builds the policy.
         *
         * @return the immutable policy
         */
        public EgressPolicy build() {
            return rules.isEmpty() && headers.isEmpty() && tlsUpstream.isEmpty()
                    ? DENY_ALL : new EgressPolicy(rules, headers, tlsUpstream);
        }
    }

    /** One allow rule: a name, a {@code *.} wildcard, or a CIDR; port 0 means any. */
    private record Rule(@Nullable String name, boolean wildcard, byte @Nullable [] network, int prefix, int port) {

        static Rule parse(String e) {
            if (e.startsWith("[")) {
                int close = e.indexOf(']');
                if (close < 0) {
                    throw new IllegalArgumentException("missing ']'");
                }
                String inside = e.substring(1, close);
                String after = e.substring(close + 1);
                String prefix = "";
                if (after.startsWith("/")) {
                    int colon = after.indexOf(':');
                    prefix = colon < 0 ? after : after.substring(0, colon);
                    after = colon < 0 ? "" : after.substring(colon);
                }
                int port = 0;
                if (!after.isEmpty()) {
                    if (!after.startsWith(":")) {
                        throw new IllegalArgumentException("bad text after ']'");
                    }
                    port = parsePort(after.substring(1));
                }
                return cidr(inside + (prefix.isEmpty() ? "/128" : prefix), port);
            }
            String body = e;
            int port = 0;
            int colon = e.lastIndexOf(':');
            if (colon >= 0) {
                body = e.substring(0, colon);
                port = parsePort(e.substring(colon + 1));
            }
            if (body.contains("/")) {
                return cidr(body, port);
            }
            return host(body, port);
        }

        static int parsePort(String s) {
            try {
                int p = Integer.parseInt(s);
                if (p < 1 || p > 65535) {
                    throw new IllegalArgumentException("port " + p + " out of range");
                }
                return p;
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException("bad port '" + s + "'");
            }
        }

        static void checkPort(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " out of range");
            }
        }

        static Rule host(String spec, int port) {
            checkPort(port);
            boolean wild = spec.startsWith("*.");
            String n = normalizeName(wild ? spec.substring(2) : spec)
                    .orElseThrow(() -> new IllegalArgumentException("not a host name"));
            if (parseIpLiteral(n).isPresent()) {
                throw new IllegalArgumentException("an IP literal needs a CIDR rule, e.g. " + spec + "/32");
            }
            return new Rule(n, wild, null, 0, port);
        }

        static Rule cidr(String spec, int port) {
            checkPort(port);
            int slash = spec.indexOf('/');
            String ip = slash < 0 ? spec : spec.substring(0, slash);
            if (ip.startsWith("[") && ip.endsWith("]")) {
                ip = ip.substring(1, ip.length() - 1);
            }
            // CIDRs are written plainly: dotted-quad IPv4 or IPv6 only
            if (!ip.contains(":") && !ip.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
                throw new IllegalArgumentException("not an IP address");
            }
            byte[] net = parseIpLiteral(ip).orElseThrow(() -> new IllegalArgumentException("not an IP address"));
            int max = net.length * 8;
            int prefix;
            try {
                prefix = slash < 0 ? max : Integer.parseInt(spec.substring(slash + 1));
            } catch (NumberFormatException ex) {
                throw new IllegalArgumentException("bad prefix length");
            }
            if (prefix < 0 || prefix > max) {
                throw new IllegalArgumentException("prefix length out of range");
            }
            return new Rule(null, false, net, prefix, port);
        }

        boolean matchesName(String host, int p) {
            if (name == null || (port != 0 && port != p)) {
                return false;
            }
            return wildcard ? host.endsWith("." + name) : host.equals(name);
        }

        boolean matchesAddress(byte[] addr, int p) {
            if (network == null || (port != 0 && port != p) || addr.length != network.length) {
                return false;
            }
            int full = prefix / 8;
            for (int i = 0; i < full; i++) {
                if (addr[i] != network[i]) {
                    return false;
                }
            }
            int rest = prefix % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xff << (8 - rest)) & 0xff;
            return (addr[full] & mask) == (network[full] & mask);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Rule r && toString().equals(r.toString());
        }

        @Override
        public int hashCode() {
            return toString().hashCode();
        }

        @Override
        public String toString() {
            String base;
            if (name != null) {
                base = (wildcard ? "*." : "") + name;
            } else {
                byte[] net = Objects.requireNonNull(network);
                String ip;
                try {
                    ip = InetAddress.getByAddress(net).getHostAddress();
                } catch (UnknownHostException e) {
                    throw new IllegalStateException(e);
                }
                base = net.length == 16 ? "[" + ip + "]/" + prefix : ip + "/" + prefix;
            }
            return port == 0 ? base : base + ":" + port;
        }
    }
}
