# Kills what carries SANDBOXKIT_EXEC_ID=<marker> in its environment. Arguments: g:<marker> kills those
# processes and the process groups they lead (a command and everything it started), p:<marker> the
# processes only (a channel: its supervisor leads the group its earlier commands' background jobs live
# in), d:<dir> removes a channel's directory afterwards. Up to three passes catch processes forked
# during the previous one. One grep -z over all environ files where grep supports it (GNU, busybox).
if printf 'a\0' | grep -qzxF a 2>/dev/null; then z=1; else z=; fi
for a in "$@"; do
  case $a in
    g:* | p:*)
      m="SANDBOXKIT_EXEC_ID=${a#??}"
      n=0
      while [ "$n" -lt 3 ]; do
        n=$((n+1))
        if [ -n "$z" ]; then
          pids=$(grep -lzxF "$m" /proc/[0-9]*/environ 2>/dev/null)
        else
          pids=
          for f in /proc/[0-9]*/environ; do
            tr '\0' '\n' 2>/dev/null <"$f" | grep -qxF "$m" && pids="$pids $f"
          done
        fi
        [ -n "$pids" ] || break
        for f in $pids; do
          p=${f#/proc/}; p=${p%/environ}
          case $a in g:*) kill -9 -- "-$p" 2>/dev/null ;; esac
          kill -9 "$p" 2>/dev/null
        done
      done ;;
  esac
done
for a in "$@"; do
  case $a in d:/tmp/.sandboxkit-* | d:/dev/shm/.sandboxkit-*) rm -rf "${a#d:}" ;; esac
done
exit 0
