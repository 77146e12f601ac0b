package dev.sandboxkit.docker.internal.channel;

import java.util.List;

/**
 * Read access to the command channels' state for the driver-level tests in {@code dev.sandboxkit.docker}
 * ({@code CommandChannelTest}, {@code ShellSessionDockerTest}), which drive the channels through the SPI and so
 * live beside the driver. Test code only: no production member is public for their sake.
 */
public final class ChannelProbe {
    /** {@link ExecChannels#MAX_CHANNELS}. */
    public static final int MAX_CHANNELS = ExecChannels.MAX_CHANNELS;
    /** {@link ExecChannels#MAX_STDIN}. */
    public static final int MAX_STDIN = ExecChannels.MAX_STDIN;
    /** {@link CommandChannel#LABEL}, shown by ps next to every supervisor. */
    public static final String LABEL = CommandChannel.LABEL;

    private ChannelProbe() {
    }

    /** Commands run on a channel so far. */
    public static long channelExecs(ExecChannels channels) {
        return channels.channelExecs.sum();
    }

    /** Commands run as plain execs so far. */
    public static long plainExecs(ExecChannels channels) {
        return channels.plainExecs.sum();
    }

    /** The sandbox's channel pool (opaque), or {@code null} once it was dropped. */
    public static Object pool(ExecChannels channels, String containerId) {
        return channels.pool(containerId);
    }

    /** Why the channel cannot run in the sandbox, or {@code null}. */
    public static String unavailable(ExecChannels channels, String containerId) {
        return channels.pool(containerId).unavailable();
    }

    /** The sandbox's open channels, idle or busy. */
    public static List<Channel> channels(ExecChannels channels, String containerId) {
        ChannelPool pool = channels.pool(containerId);
        return pool == null ? List.of() : pool.channels().stream().map(Channel::new).toList();
    }

    /** One channel, equal to another view of the same channel. */
    public static final class Channel {
        private final CommandChannel channel;

        private Channel(CommandChannel channel) {
            this.channel = channel;
        }

        /** The nonce of the channel's latest command. */
        public String lastNonce() {
            return channel.lastNonce;
        }

        /** The channel's private directory in the sandbox. */
        public String dir() {
            return channel.dir;
        }

        /** Whether the channel must not carry another command. */
        public boolean broken() {
            return channel.broken();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Channel c && c.channel == channel;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(channel);
        }

        @Override
        public String toString() {
            return channel.toString();
        }
    }
}
