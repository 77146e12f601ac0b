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
setsid sh -c 'echo $$ >"$1/pid.t" && mv "$1/pid.t" "$1/pid"; shift; exec "$@"' sh "$d" "$@" \
  <"$d/in" >"$d/o" 2>"$d/e"
rc=$?
# A shell reports a signal as 128+n, like an exit code; only a signal sent through the API is taken as one.
s=
[ -s "$d/sig" ] && read -r s <"$d/sig"
if [ -n "$s" ] && [ "$rc" -gt 128 ] && [ "$rc" -eq $((128 + s)) ]; then r="signaled $s"; else r="exited $rc"; fi
echo "$r" >"$d/exit.t" && mv "$d/exit.t" "$d/exit"
[ -s "$d/holder" ] && kill "$(cat "$d/holder")" 2>/dev/null
[ -s "$d/timer" ] && kill "$(cat "$d/timer")" 2>/dev/null
wait
