# Sourced by bench/run.sh, bench/git.sh, bench/start.sh and bench/api-turns.sh: the server's JVM, its memory and CPU.

# server_jvm_pid PID: the server's JVM: PID itself when `atrium run` exec'd java, else its java child (the run that
# writes the CDS archive keeps the script waiting for java).
server_jvm_pid() {
  local kid
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = java ] && { echo "$1"; return 0; }
  for kid in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    [ "$(cat "/proc/$kid/comm" 2>/dev/null)" = java ] && { echo "$kid"; return 0; }
  done
  echo "$1"
}

# rss_mb PID: resident set size of the server's JVM in MB (ps -o rss, KiB); peak_rss_mb PID: its high-water mark.
rss_mb() { ps -o rss= -p "$(server_jvm_pid "$1")" | awk '{ printf "%d", $1 / 1024 }'; }
peak_rss_mb() { awk '/^VmHWM:/ { printf "%d", $2 / 1024 }' "/proc/$(server_jvm_pid "$1")/status" 2>/dev/null; }

# process_jiffies PID: user+system clock ticks of all threads of PID (0 once it is gone).
process_jiffies() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }' || echo 0; }
