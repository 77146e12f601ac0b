package dev.sandboxkit.spi;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

/**
 * Resolves a host name for the egress proxy on the host side. The default is the system DNS; a resolver the
 * operator sets is trusted (its loopback or private answers are used as given), while loopback, any-local,
 * link-local and multicast answers from the default are refused unless a CIDR rule allows them (DNS rebinding).
 */
@FunctionalInterface
public interface EgressResolver {

    /**
     * Resolves a name.
     *
     * @param host lower-cased host name without trailing dot
     * @return its addresses, in the order to try them; never empty
     * @throws UnknownHostException if the name does not resolve
     */
    List<InetAddress> resolve(String host) throws UnknownHostException;

    /**
     * The system DNS.
     *
     * @return a resolver backed by {@link InetAddress#getAllByName}
     */
    static EgressResolver system() {
        return host -> List.of(InetAddress.getAllByName(host));
    }
}
