# Background processes: one short exec of this script per operation, named by $1. A process's state lives
# in the container, in /tmp/.sandboxkit/proc/<id> (else /dev/shm/...), never in a JVM, so every handle,
# manager or JVM reaches it the same way. Layout: sup and pid (the supervisor's and the command's pid; the
# command leads its own process group), exit ("exited N" or "signaled N"), sig (the last signal sent through
# the API), holder (keeps the stdin FIFO "in" open), counts (present: the process counts as activity),
# seg (segment size), out/ and err/ (segments named by start offset) with out.done and err.done, log; on a
# terminal also tty ("<cols> <rows> <util|busybox>": the size asked for and which script(1) runs it) and pts
# (the path of its pty slave, where a resize sets the window size).
op=$1
shift
# Sets d to the process's directory; fails if this container has none.
at() {
  for b in /tmp /dev/shm; do
    if [ -d "$b/.sandboxkit/proc/$1" ]; then d=$b/.sandboxkit/proc/$1; return 0; fi
  done
  return 1
}
# Sets st to "exited N", "signaled N", "running" or "lost supervisor" (killed before it recorded the end).
state() {
  if [ -s "$d/exit" ]; then read -r st <"$d/exit"; return; fi
  p= s=
  [ -s "$d/pid" ] && read -r p <"$d/pid"
  [ -s "$d/sup" ] && read -r s <"$d/sup"
  if { [ -n "$p" ] && kill -0 "$p"; } 2>/dev/null || { [ -n "$s" ] && kill -0 "$s"; } 2>/dev/null; then
    st=running
  elif [ -s "$d/exit" ]; then
    read -r st <"$d/exit"
  else
    st="lost supervisor"
  fi
}
case $op in
start)
  # $1 id, $2 segment bytes, $3 timeout seconds, $4 1 if it counts as activity, $5 the supervisor, $6 the
  # terminal's size "<cols>x<rows>" or "-" for none, then argv. Prints "started <pid>" once the command runs.
  id=$1 seg=$2 tmo=$3 act=$4 sup=$5 tty=$6
  shift 6
  d=
  for b in /tmp /dev/shm; do
    if [ -d "$b" ] && [ -w "$b" ] && mkdir -p "$b/.sandboxkit/proc" 2>/dev/null \
        && mkdir -m 700 "$b/.sandboxkit/proc/$id" 2>/dev/null; then
      d=$b/.sandboxkit/proc/$id
      break
    fi
  done
  [ -n "$d" ] || { echo "sandboxkit: no writable /tmp or /dev/shm for the process's state" >&2; exit 3; }
  for c in setsid mkfifo dd; do
    command -v "$c" >/dev/null 2>&1 || { echo "sandboxkit: background processes need $c" >&2; rm -rf "$d"; exit 4; }
  done
  if [ "$tty" != - ]; then
    # Exit 6: the image lacks what a terminal needs (the engine reports it as unsupported).
    mode=
    if command -v script >/dev/null 2>&1; then
      case $(script -V 2>&1) in *util-linux*) mode=util ;; *) mode=busybox ;; esac
    fi
    [ -n "$mode" ] || { echo "sandboxkit: a background process on a terminal needs script(1) (util-linux, or the busybox applet) in the image, and this image has none" >&2; rm -rf "$d"; exit 6; }
    command -v stty >/dev/null 2>&1 || { echo "sandboxkit: a background process on a terminal needs stty in the image" >&2; rm -rf "$d"; exit 6; }
    echo "${tty%x*} ${tty#*x} $mode" >"$d/tty"
  fi
  mkdir "$d/out" "$d/err" && mkfifo "$d/in" "$d/o" "$d/e" && echo "$seg" >"$d/seg" || exit 3
  [ "$act" = 1 ] && : >"$d/counts"
  # The command channel's timeout kill finds its commands by this variable; the process must outlive the exec.
  unset SANDBOXKIT_EXEC_ID
  # setsid forks when its caller leads a group: the first runs the second detached, in a session of its own.
  setsid sh -c 'exec setsid sh -c "$0" "$@"' "$sup" sandboxkit-proc "$d" "$seg" "$tmo" "$@" \
    </dev/null >/dev/null 2>"$d/log"
  i=0
  while [ ! -s "$d/pid" ] && [ ! -s "$d/exit" ] && [ "$i" -lt 400 ]; do sleep 0.025; i=$((i + 1)); done
  if [ -s "$d/pid" ]; then read -r p <"$d/pid"; echo "started $p"; exit 0; fi
  echo "sandboxkit: the process did not start" >&2
  cat "$d/log" >&2
  exit 5
  ;;
status)
  if at "$1"; then state; echo "$st"; else echo none; fi
  ;;
wait)
  # $1 id, $2 polls of 50 ms at most: prints the status once the process ended or the time is up. An end is
  # reported only once both streams' copies are done ("<stream>.done"), so that a read right after sees all the
  # output: the supervisor records the exit while the copies may still drain the pipes. Output held open by
  # something the process left running is waited for at most 2 s, as follow does.
  at "$1" || { echo none; exit 0; }
  i=0
  while state; [ "$st" = running ] && [ "$i" -lt "$2" ]; do sleep 0.05; i=$((i + 1)); done
  case $st in
  exited* | signaled*)
    i=0
    while { [ ! -e "$d/out.done" ] || [ ! -e "$d/err.done" ]; } && [ "$i" -lt 200 ]; do sleep 0.01; i=$((i + 1)); done
    ;;
  esac
  echo "$st"
  ;;
read)
  # $1 id, $2 out|err, $3 offset, $4 at most this many bytes: writes them to stdout, then to stderr
  # "<status>|<first available> <end> <offset of the bytes> <1 if the stream ended>".
  at "$1" || { echo "none|0 0 0 1" >&2; exit 0; }
  state
  dn=0
  [ -e "$d/$2.done" ] && dn=1
  read -r seg <"$d/seg"
  # A fast writer can start four segments between the listing and the size of the newest, which then is pruned:
  # list again (the window moved on).
  try=0
  while :; do
    first=-1 last=-1
    for f in "$d/$2"/*; do
      n=${f##*/}
      case $n in '' | *[!0-9]*) continue ;; esac
      if [ "$first" -lt 0 ] || [ "$n" -lt "$first" ]; then first=$n; fi
      if [ "$n" -gt "$last" ]; then last=$n; fi
    done
    if [ "$last" -lt 0 ]; then first=0 end=0; break; fi
    if size=$(wc -c 2>/dev/null <"$d/$2/$last"); then end=$((last + size)); break; fi
    try=$((try + 1))
    [ "$try" -lt 50 ] || { echo "sandboxkit: the output window of $1 kept moving while it was read" >&2; exit 7; }
  done
  o=$3 m=$4
  [ "$o" -lt "$first" ] && o=$first
  [ "$o" -gt "$end" ] && o=$end
  from=$o
  while [ "$m" -gt 0 ] && [ "$o" -lt "$end" ]; do
    s=$((o / seg * seg))
    k=$((seg - (o - s)))
    [ "$k" -gt "$m" ] && k=$m
    [ "$k" -gt $((end - o)) ] && k=$((end - o))
    # A segment pruned meanwhile fails to open: the caller sees fewer bytes and the drop on its next read.
    dd if="$d/$2/$s" bs=65536 skip=$((o - s)) count="$k" iflag=skip_bytes,count_bytes 2>/dev/null || break
    o=$((o + k)) m=$((m - k))
  done
  printf '%s|%s %s %s %s\n' "$st" "$first" "$end" "$from" "$dn" >&2
  ;;
signal)
  # $1 id, $2 signal number, sent to the command's whole process group (also what it left running).
  at "$1" || { echo none; exit 0; }
  [ -s "$d/pid" ] || { echo none; exit 0; }
  read -r p <"$d/pid"
  state
  [ "$st" = running ] && echo "$2" >"$d/sig"
  if kill -"$2" "-$p" 2>/dev/null; then echo "sent $st"; else echo "nogroup $st"; fi
  ;;
resize)
  # $1 id, $2 columns, $3 rows: sets the window size of the process's pty slave; the kernel sends SIGWINCH to
  # the terminal's foreground process group.
  at "$1" || { echo none; exit 0; }
  [ -s "$d/tty" ] || { echo notty; exit 0; }
  state
  [ "$st" = running ] || { echo "ended $st"; exit 0; }
  [ -s "$d/pts" ] && read -r pts <"$d/pts" && stty -F "$pts" cols "$2" rows "$3" && echo ok
  ;;
tty)
  # Prints the path of the process's pty slave, "notty" without a terminal, or "none".
  at "$1" || { echo none; exit 0; }
  if [ -s "$d/tty" ]; then if [ -s "$d/pts" ]; then cat "$d/pts"; else echo starting; fi; else echo notty; fi
  ;;
write)
  at "$1" || { echo none; exit 0; }
  state
  [ "$st" = running ] || { echo "ended $st"; exit 0; }
  [ -s "$d/holder" ] || { echo closed; exit 0; }
  cat >"$d/in" && echo ok
  ;;
close)
  at "$1" || { echo none; exit 0; }
  if [ -s "$d/holder" ]; then read -r h <"$d/holder"; rm -f "$d/holder"; kill "$h" 2>/dev/null; fi
  echo ok
  ;;
list)
  for b in /tmp /dev/shm; do
    for d in "$b"/.sandboxkit/proc/*; do [ -d "$d" ] && echo "${d##*/}"; done
  done
  ;;
busy)
  # Whether a process that counts as activity runs: the reaper's check.
  for b in /tmp /dev/shm; do
    for d in "$b"/.sandboxkit/proc/*; do
      [ -f "$d/counts" ] || continue
      state
      [ "$st" = running ] && { echo busy; exit 0; }
    done
  done
  echo idle
  ;;
remove)
  # Kills what is left of the process, lets its supervisor finish, then deletes its state.
  at "$1" || { echo none; exit 0; }
  state
  if [ -s "$d/pid" ]; then
    read -r p <"$d/pid"
    [ "$st" = running ] && echo 9 >"$d/sig"
    kill -9 "-$p" 2>/dev/null
  fi
  [ -s "$d/holder" ] && kill "$(cat "$d/holder")" 2>/dev/null
  s=
  [ -s "$d/sup" ] && read -r s <"$d/sup"
  i=0
  while [ -n "$s" ] && kill -0 "$s" 2>/dev/null && [ "$i" -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  rm -rf "$d"
  echo removed
  ;;
*)
  echo "sandboxkit: unknown process operation $op" >&2
  exit 2
  ;;
esac
