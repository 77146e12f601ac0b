# Shared by the channel supervisor (channel-supervisor.sh includes it) and by plain execs that ask for a
# working directory (EngineExec runs them as `sh -c <this, then the call below> sh <dir> argv...`). POSIX sh.
# __cd enters the working directory as the sandbox user, as a shell's cd does: an engine exec enters it as
# root before switching user, and would run in a directory the user cannot enter. Exit 126 if it cannot.
__cd() {
  cd "$1" 2>/dev/null && return 0
  if [ -e "$1" ] && [ ! -d "$1" ]; then __w='not a directory'
  elif [ -e "$1" ] || __denied "$1"; then __w='permission denied'
  else __w='no such file or directory'; fi
  printf 'chdir to working directory "%s" failed: %s\n' "$1" "$__w" >&2
  exit 126
}
# Whether path $1 cannot be looked up because an ancestor that exists cannot be searched (EACCES, where
# [ -e ] alone cannot tell it from ENOENT).
__denied() {
  __a=$1
  while :; do
    case $__a in */*) __a=${__a%/*} ;; *) return 1 ;; esac
    [ -n "$__a" ] || return 1
    if [ -d "$__a" ]; then [ ! -x "$__a" ]; return; fi
  done
}
# __run <setsid binary or ''> argv...: the PATH lookup an engine exec does (with the command's own PATH),
# then exec, through setsid when given. Failures give a plain exec's exit codes and messages: 127 not
# found (ENOENT, ENOTDIR), 126 cannot run (the shell itself exits 126 when exec fails, e.g. with E2BIG).
__run() {
  __s=$1
  shift
  case $1 in
    */*) __p=$1 ;;
    *) __p= __r=$PATH
       while :; do
         __q=${__r%%:*}
         if [ -f "${__q:-.}/$1" ] && [ -x "${__q:-.}/$1" ]; then __p=${__q:-.}/$1; break; fi
         case $__r in *:*) __r=${__r#*:} ;; *) break ;; esac
       done
       if [ -z "$__p" ]; then printf 'exec: "%s": executable file not found in $PATH\n' "$1" >&2; exit 127; fi ;;
  esac
  if [ ! -e "$__p" ]; then
    if __denied "$__p"; then printf 'exec: "%s": permission denied\n' "$1" >&2; exit 126; fi
    printf 'exec: "%s": no such file or directory\n' "$1" >&2; exit 127
  fi
  if [ -d "$__p" ] || [ ! -x "$__p" ]; then printf 'exec: "%s": permission denied\n' "$1" >&2; exit 126; fi
  if [ -n "$__s" ]; then exec "$__s" -- "$@"; fi
  exec "$@"
}
