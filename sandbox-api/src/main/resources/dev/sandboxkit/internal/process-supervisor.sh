# The supervisor of one background process, started in a session of its own by process.sh's start (so no
# group kill of the command reaches it). $1 state dir, $2 segment bytes, $3 timeout seconds (0: none), then
# the command's argv. Runs the command in the foreground (a background job of a non-interactive shell would
# ignore SIGINT and SIGQUIT, and pass that on), in a session and process group of its own, and records how it
# ended in "exit".
d=$1 seg=$2 tmo=$3
shift 3
echo $$ >"$d/sup"
# Copies one stream into segments of $seg bytes named by their start offset and keeps the newest 4: the
# retained window moves on as old segments go. "<stream>.done" marks the stream's end.
cap() {
  exec <"$1"
  k=0
  while :; do
    [ "$k" -ge 4 ] && rm -f "$2/$(((k - 4) * seg))"
    f=$2/$((k * seg))
    dd of="$f" bs=65536 count="$seg" iflag=count_bytes 2>/dev/null
    [ "$(wc -c <"$f")" -lt "$seg" ] && break
    k=$((k + 1))
  done
  : >"$2.done"
}
( cap "$d/o" "$d/out" ) &
( cap "$d/e" "$d/err" ) &
# Holds the stdin FIFO open (read-write never blocks), so the command sees EOF only once closeStdin kills it.
sleep 999999999 3<>"$d/in" &
echo $! >"$d/holder.t" && mv "$d/holder.t" "$d/holder"
if [ "$tmo" -gt 0 ]; then
  ( sleep "$tmo" & echo $! >"$d/timer"; wait
    if [ ! -s "$d/exit" ] && [ -s "$d/pid" ]; then echo 9 >"$d/sig"; kill -9 "-$(cat "$d/pid")"; fi ) 2>/dev/null &
fi
if [ -s "$d/tty" ]; then
  # On a terminal: script(1) holds the pty master here, in the container (no one outside could), copies stdin
  # from the FIFO to it and its output (stderr merged, as a terminal does) to "o"; "e" gets only script's own
  # errors. script takes one command string for $SHELL -c, so the argv goes through the environment, and the
  # inner shell rebuilds it. The command's child of script leads a new session: its pid is its group.
  read -r cols rows mode <"$d/tty"
  n=0
  for a in "$@"; do
    export "SANDBOXKIT_A$n=$a"
    n=$((n + 1))
  done
  export SANDBOXKIT_N=$n SANDBOXKIT_D="$d" SANDBOXKIT_SZ="cols $cols rows $rows" SANDBOXKIT_SH="${SHELL-}" \
    SANDBOXKIT_HASSH="${SHELL+1}" SANDBOXKIT_MODE="$mode"
  SHELL=/bin/sh
  export SHELL
  inner='d=$SANDBOXKIT_D
stty $SANDBOXKIT_SZ
tty >"$d/pts.t" && mv "$d/pts.t" "$d/pts"
set --
i=0
while [ "$i" -lt "$SANDBOXKIT_N" ]; do eval "set -- \"\$@\" \"\$SANDBOXKIT_A$i\""; unset "SANDBOXKIT_A$i"; i=$((i + 1)); done
if [ -n "$SANDBOXKIT_HASSH" ]; then SHELL=$SANDBOXKIT_SH; else unset SHELL; fi
m=$SANDBOXKIT_MODE
unset SANDBOXKIT_N SANDBOXKIT_D SANDBOXKIT_SZ SANDBOXKIT_SH SANDBOXKIT_HASSH SANDBOXKIT_MODE
echo $$ >"$d/pid.t" && mv "$d/pid.t" "$d/pid"
[ "$m" = util ] && exec "$@"
"$@"
echo $? >"$d/rc"'
  # util-linux script -e returns the command's status (128+n for a signal); busybox's has no -e: "rc" has it.
  if [ "$mode" = util ]; then
    script -q -f -e -c "$inner" /dev/null <"$d/in" >"$d/o" 2>"$d/e"
  else
    script -q -f -c "$inner" /dev/null <"$d/in" >"$d/o" 2>"$d/e"
  fi
  rc=$?
  if [ -s "$d/rc" ]; then
    read -r rc <"$d/rc"
  elif [ "$mode" != util ] && [ -s "$d/sig" ]; then
    # busybox: the command and its shell died of the signal sent, before writing "rc".
    read -r rc <"$d/sig"
    rc=$((128 + rc))
  fi
else
  setsid sh -c 'echo $$ >"$1/pid.t" && mv "$1/pid.t" "$1/pid"; shift; exec "$@"' sh "$d" "$@" \
    <"$d/in" >"$d/o" 2>"$d/e"
  rc=$?
fi
# A shell reports a signal as 128+n, like an exit code; only a signal sent through the API is taken as one.
s=
[ -s "$d/sig" ] && read -r s <"$d/sig"
if [ -n "$s" ] && [ "$rc" -gt 128 ] && [ "$rc" -eq $((128 + s)) ]; then r="signaled $s"; else r="exited $rc"; fi
echo "$r" >"$d/exit.t" && mv "$d/exit.t" "$d/exit"
[ -s "$d/holder" ] && kill "$(cat "$d/holder")" 2>/dev/null
[ -s "$d/timer" ] && kill "$(cat "$d/timer")" 2>/dev/null
wait
