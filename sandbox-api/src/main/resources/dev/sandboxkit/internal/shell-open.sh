# Creates a shell session's private state directory and prints its path. $1: a random name.
for b in /tmp /dev/shm; do
  if [ -d "$b" ] && [ -w "$b" ] && mkdir -m 700 "$b/.sandboxkit-shell-$1" 2>/dev/null; then
    printf '%s' "$b/.sandboxkit-shell-$1"
    exit 0
  fi
done
echo "sandboxkit: no writable /tmp or /dev/shm for the shell session's state" >&2
exit 3
