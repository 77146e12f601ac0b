# sandboxkit command channel supervisor; CommandChannel.java documents the protocol and why output
# cannot forge a frame. POSIX sh only (dash, busybox ash, bash as sh): no arrays, no local, no $'..'.
# Read from stdin by `sh -s sandboxkit-channel <id> <setsid 0|1>`: $2 names the channel, $3 asks to start
# every command in a session of its own when a setsid binary exists.
# One brace group: the shell reads this script from the same stdin as the requests, so it must have
# parsed all of it before it prints the ready line (after which the requests come).
{
set -f
unset IFS
nl='
'
B=32
# Ignored here and in the relays, reset in each command: `kill 0` from a command must not end the channel.
trap '' HUP INT QUIT TERM
d=
for b in /tmp /dev/shm; do
  if [ -d "$b" ] && [ -w "$b" ] && mkdir -m 700 "$b/.sandboxkit-$2" 2>/dev/null; then d=$b/.sandboxkit-$2; break; fi
done
if [ -z "$d" ]; then printf 'SBXFAIL %s no-writable-tmp-or-dev-shm\n' "$2"; exit 0; fi
co=
ce=
trap 'kill -9 $co $ce 2>/dev/null; rm -rf "$d"' EXIT
k=0 f= ro= re=
while [ "$k" -lt "$B" ]; do
  k=$((k+1)); f="$f o$k t$k e$k u$k"; ro="$ro o$k t$k"; re="$re e$k u$k"
done
if ! (cd "$d" && exec mkfifo -m 600 $f) </dev/null >/dev/null 2>&1; then printf 'SBXFAIL %s mkfifo\n' "$2"; exit 0; fi
s=
if [ "$3" = 1 ]; then
  p=$PATH
  while [ -n "$p" ]; do
    q=${p%%:*}
    case $p in *:*) p=${p#*:} ;; *) p= ;; esac
    case $q in /*) if [ -f "$q/setsid" ] && [ -x "$q/setsid" ]; then s=$q/setsid; break; fi ;; esac
  done
  if [ -n "$s" ] && ! "$s" -- true </dev/null >/dev/null 2>&1; then s=; fi
fi
x=0
if [ "$(printf abcd | dd bs=65536 count=2 iflag=count_bytes,fullblock 2>/dev/null)" = ab ]; then x=1; fi
# Two relays per batch of B commands: cat reads o1 t1 o2 t2 ... in order. Command j writes o<j>; the
# supervisor writes its end frame into t<j>, which cat opens only after o<j> ended (every writer closed).
# No other child ever runs in the background: a stray SIGCHLD would interrupt the blocking opens and
# reads below (busybox ash catches it). The old relays are reaped here, the stdin copies removed here.
spawn() {
  if [ -n "$co" ]; then
    wait "$co" "$ce" 2>/dev/null
    k=0 f=
    while [ "$k" -lt "$B" ]; do k=$((k+1)); f="$f in$k"; done
    (cd "$d" && exec rm -f $f) </dev/null >/dev/null 2>&1
  fi
  (cd "$d" && exec cat $ro 2>/dev/null) </dev/null &
  co=$!
  (cd "$d" && exec cat $re 2>/dev/null) </dev/null >&2 &
  ce=$!
  j=0
}
# Opens (blocking until the relay opened its end) with a retry: an interrupted open must not end the shell.
wopen() {
  until { command exec 7>"$d/o$j" 8>"$d/e$j"; } 2>/dev/null; do [ -p "$d/o$j" ] && [ -p "$d/e$j" ] || exit 0; done
}
frame() {
  until { printf '#%sT' "$n" >"$d/$1$j"; } 2>/dev/null; do [ -p "$d/$1$j" ] || exit 0; done
}
# Runs in the command's subshell: $1 exec id, $2 working dir, $3 count of NAME=VALUE words, then argv.
# Mirrors what the engine does for an exec: environment, working directory, PATH lookup with the
# command's own PATH, then exec (through setsid for a session of its own); see exec-command.sh.
#@exec-command.sh
__x() {
  trap - HUP INT QUIT TERM
  __cd "$2"
  # The supervisor's shell added these; an engine exec has none of them.
  unset PWD OLDPWD SHLVL
  __i=$1 __n=$3
  shift 3
  while [ "$__n" -gt 0 ]; do export "$1"; shift; __n=$((__n-1)); done
  export SANDBOXKIT_EXEC_ID="$__i"
  __run "$s" "$@"
}
spawn
if [ -n "$s" ]; then y=1; else y=0; fi
printf 'SBXREADY %s %s setsid=%s stdin=%s\n' "$2" "$d" "$y" "$x"
while IFS=' ' read -r n l; do
  IFS= read -r c || exit 0
  case $n in '' | *[!0-9a-f]*) exit 0 ;; esac
  j=$((j+1))
  # Never put the nonce in a file name or an argument: other processes could read those.
  case $l in
    -1) exec 6</dev/null ;;
    0) exec 6</dev/null ;;
    '' | *[!0-9]*) exit 0 ;;
    *) dd of="$d/in$j" bs=65536 count="$l" iflag=count_bytes,fullblock 2>/dev/null || exit 0
       exec 6<"$d/in$j" ;;
  esac
  if [ "$l" != -1 ]; then
    IFS= read -r z || exit 0
    [ "$z" = "$n" ] || exit 0
  fi
  [ -p "$d/o$j" ] && [ -p "$d/t$j" ] && [ -p "$d/e$j" ] && [ -p "$d/u$j" ] || exit 0
  wopen
  printf '#%sS' "$n" >&2
  # The shell reports a command killed by a signal ("Killed") on its own stderr, whatever redirection
  # surrounds the command (dash, busybox ash); a plain exec reports nothing, so that stderr is muted here.
  exec 9>&2 2>/dev/null
  ( eval "$c" ) <&6 >&7 2>&8 6<&- 7>&- 8>&- 9>&-
  r=$?
  exec 2>&9 9>&- 6<&- 7>&- 8>&-
  printf '#%sR%s.' "$n" "$r" >&2
  # The stdin copy is emptied now and removed with its batch (unlinking needs an rm).
  case $l in -1 | 0) ;; *) : >"$d/in$j" ;; esac
  frame t
  frame u
  [ "$j" -lt "$B" ] || spawn
done
exit 0
}
