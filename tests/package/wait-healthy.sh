# Sourced by deb-test.sh and image-smoke.sh.
# wait_healthy PORT PID TRIES: polls http://127.0.0.1:PORT/healthz every half second, at
# most TRIES times, while process PID lives; returns 0 once it answers 200.
wait_healthy() {
  local port=$1 pid=$2 tries=$3 _
  for _ in $(seq 1 "$tries"); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.5
  done
  return 1
}
