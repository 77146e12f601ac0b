# One command of a shell session. $1 state dir, $2 the script, $3 names of this command's own env
# variables (shell identifiers, space-separated): they win over the saved state and are never saved.
# Restores the exported environment and working directory the previous command left, runs the script in
# this shell, and on exit (exit builtin, set -e, end of script) saves them again. A killed command saves
# nothing, so the session keeps the state from before it.
__sbx_d=$1 __sbx_c=$2 __sbx_p=$3
shift 3
__sbx_k=0
for __sbx_n in $__sbx_p; do eval "__sbx_v$__sbx_k=\${$__sbx_n}"; __sbx_k=$((__sbx_k+1)); done
if [ -f "$__sbx_d/env" ]; then . "$__sbx_d/env"; fi
__sbx_k=0
for __sbx_n in $__sbx_p; do
  eval "export $__sbx_n=\"\${__sbx_v$__sbx_k}\"; unset __sbx_v$__sbx_k"
  __sbx_k=$((__sbx_k+1))
done
if [ -f "$__sbx_d/cwd" ]; then
  IFS= read -r __sbx_w <"$__sbx_d/cwd"
  cd "$__sbx_w" 2>/dev/null \
    || printf 'sandboxkit: the shell session directory %s is gone; running in %s\n' "$__sbx_w" "$PWD" >&2
fi
unset __sbx_k __sbx_n __sbx_w
trap '__sbx_r=$?; trap - EXIT; unset SANDBOXKIT_EXEC_ID SHLVL $__sbx_p; { export -p >"$__sbx_d/env"; pwd >"$__sbx_d/cwd"; } 2>/dev/null; exit $__sbx_r' EXIT
command eval "$__sbx_c"
