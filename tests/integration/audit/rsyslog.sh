#!/usr/bin/env bash
# A private rsyslog RFC 5425 receiver (gnutls driver, mutual TLS, x509/name with the
# permitted peer client.fedtest) for the audit tests. Adapted from
# shared/recipes/start-rsyslog-tls.sh; never installs anything and never touches a
# process it did not start.
#   rsyslog.sh start BASE PORT   # PKI in BASE/pki (make-pki.sh); writes BASE/received.log
#   rsyslog.sh stop BASE         # TERM, then KILL, the pid recorded at start
#   rsyslog.sh kill BASE         # SIGKILL (a crash)
# The ruleset queue is Direct: a message is in the file (page cache) before rsyslog reads
# the next one from the socket, so what its TCP acknowledged and the sender saw settle
# is not held in a memory queue that a crash would lose.
set -euo pipefail
cmd=$1 base=$2
# shellcheck source=../../testutil/port.sh
. "$(dirname "$0")/../../testutil/port.sh"
case $cmd in
start)
  port=$3
  command -v rsyslogd >/dev/null || { echo "rsyslogd not installed (scripts/install-deps.sh with GPUFED_TEST_DEPS=1)" >&2; exit 1; }
  [ -f /usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_gtls.so ] || ls /usr/lib/*/rsyslog/lmnsd_gtls.so >/dev/null 2>&1 ||
    { echo "rsyslog-gnutls not installed" >&2; exit 1; }
  mkdir -p "$base/work"
  cat >"$base/rsyslog.conf" <<CONF
global(workDirectory="$base/work"
       DefaultNetstreamDriver="gtls"
       DefaultNetstreamDriverCAFile="$base/pki/ca.crt"
       DefaultNetstreamDriverCertFile="$base/pki/server.crt"
       DefaultNetstreamDriverKeyFile="$base/pki/server.key"
       maxMessageSize="64k")
module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1"
       StreamDriver.AuthMode="x509/name" PermittedPeer=["client.fedtest"] MaxSessions="50")
input(type="imtcp" address="127.0.0.1" port="$port" ruleset="tls")
template(name="raw" type="string" string="%timegenerated:::date-rfc3339% peer=%fromhost-ip% %timereported:::date-rfc3339% %hostname% %app-name% %procid% %msgid% %structured-data% %msg%\n")
ruleset(name="tls" queue.type="${RSYSLOG_QUEUE:-Direct}") {
  action(type="omfile" file="$base/received.log" template="raw" asyncWriting="off" flushOnTXEnd="on" ioBufferSize="256k")
}
syslog.*  action(type="omfile" file="$base/rsyslogd-internal.log")
CONF
  rsyslogd -N1 -f "$base/rsyslog.conf" >"$base/configcheck.log" 2>&1 || { cat "$base/configcheck.log" >&2; exit 1; }
  rsyslogd -n -f "$base/rsyslog.conf" -i "$base/rsyslogd.pid" >>"$base/rsyslogd.out" 2>&1 &
  echo $! >"$base/rsyslogd.started"
  for _ in $(seq 200); do
    if port_listening "$port"; then exit 0; fi
    kill -0 "$(cat "$base/rsyslogd.started")" 2>/dev/null || { cat "$base/rsyslogd.out" >&2; exit 1; }
    sleep 0.025
  done
  echo "rsyslogd did not listen on 127.0.0.1:$port" >&2
  exit 1
  ;;
stop | kill)
  [ -f "$base/rsyslogd.started" ] || exit 0
  pid=$(cat "$base/rsyslogd.started")
  rm -f "$base/rsyslogd.started"
  kill -0 "$pid" 2>/dev/null || exit 0
  if [ "$cmd" = kill ]; then kill -KILL "$pid"; else kill -TERM "$pid"; fi
  for _ in $(seq 25); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.02; done
  kill -KILL "$pid" 2>/dev/null || true
  ;;
esac
