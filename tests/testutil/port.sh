# Sourced by the test set-up scripts. Needs nothing a minimal Debian lacks (no `ss`, no
# `netstat`): it reads the kernel's socket tables directly.
#
# port_listening PORT: true when a TCP socket listens on PORT (any local address, IPv4 or
# IPv6). Reading /proc/net/tcp{,6} opens no connection, so a TLS server (rsyslog) logs no
# failed handshake for the probe.
port_listening() {
  local hex
  hex=$(printf ':%04X' "$1")
  awk -v want="$hex" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == want { found = 1 }
                      END { exit found ? 0 : 1 }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# api_port PID LOG: waits (up to 20 s) for `gpufed run` (PID) to log "API on https://
# 127.0.0.1:PORT" in LOG and prints PORT; prints nothing when PID exits first or the time
# runs out (the caller says why, with the log).
api_port() {
  local pid=$1 log=$2 port=""
  for _ in $(seq 200); do
    port=$(sed -n 's|.*API on https://127.0.0.1:\([0-9]*\).*|\1|p' "$log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  printf '%s' "$port"
}
