/**
 * The command channel: per sandbox, up to a few long-lived attached execs running a small shell supervisor
 * ({@code channel-supervisor.sh}) that runs one command after another, so that a command costs a fork instead
 * of an engine exec. {@code CommandChannel} opens a channel and runs one command on it (the request and the
 * nonce-framed output protocol are described there), {@code ChannelOutput} parses that output,
 * {@code ChannelPool} holds one sandbox's channels, and {@code ExecChannels} routes every exec of the driver
 * to a channel or to a plain engine exec ({@code internal.engine.EngineExec}).
 *
 * <p>Not API: {@code ExecChannels} is public only so that the driver can use it, and may change in any release.
 * A module descriptor will not export this package.
 */
package dev.sandboxkit.docker.internal.channel;
