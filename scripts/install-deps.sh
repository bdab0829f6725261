#!/usr/bin/env bash
# Installs gpufed's build and test dependencies from Debian packages. Idempotent:
# only missing packages are installed. Works as root or through sudo.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libyaml-dev libyaml-cpp-dev liblua5.4-dev libcurl4-openssl-dev libssl-dev openssl
  libspdlog-dev nlohmann-json3-dev libcli11-dev libcpp-httplib-dev
  libsqlite3-dev sqlite3 libgtest-dev libgmock-dev libbenchmark-dev libjemalloc-dev
  libpq-dev
)
if [[ "${GPUFED_TEST_DEPS:-0}" == 1 ]]; then
  # The schema conformance test runs ajv from the npm registry; the layering check, the
  # Prometheus tests, the Kubernetes manifest check (PyYAML), the independent tlog
  # verifier (tests/audit/tlog_verify.py: python3-cryptography for Ed25519) and the
  # journal's record schemas (tests/audit/validate_journal.py: python3-jsonschema) are Python.
  packages+=(nodejs npm python3 python3-yaml python3-cryptography python3-jsonschema)
  # The audit integration tests and benchmark ship to a real rsyslog over mutual TLS.
  packages+=(rsyslog rsyslog-gnutls)
  # The Slurm integration tests run a real Slurm 22.05 with slurmrestd and JWT auth, and a
  # Slurm 24.11 from Debian 13 in a chroot that debootstrap builds once (see below).
  packages+=(munge slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin curl debootstrap)
  # The package stage (tests/package/in-chroot.sh) smoke-tests the container image with buildah.
  packages+=(buildah)
  # The dashboard's browser tests (tests/browser/) drive Debian's Chromium with puppeteer-core.
  packages+=(chromium)
  # /metrics is linted with promtool, the alert rules are checked and unit-tested with it,
  # and a real Prometheus scrapes a running controller (Prometheus 2.42).
  packages+=(prometheus)
  # scripts/lint.sh (test.sh's lint stage and the lint_test CTest): clang-format-19 and
  # clang-tidy-19, the same LLVM release as the fuzz stage's clang-19 (bookworm main).
  # Version-pinned rather than Debian's default clang-format (14): the style and the
  # checks a release knows differ between releases, and CI must lint as developers do.
  packages+=(clang-format-19 clang-tidy-19)
  # controller/pg and controller/ha test against a real PostgreSQL 15 that the tests start
  # themselves (tests/pg/pg-cluster.sh: initdb and postgres as the `postgres` user, a
  # throwaway TLS CA from openssl); the packaged cluster is never started (policy-rc.d below).
  packages+=(postgresql-15)
fi
if [[ "${GPUFED_FUZZ_DEPS:-0}" == 1 ]]; then
  # scripts/fuzz.sh: clang-19 with its libFuzzer/sanitizer runtime, and llvm-19 for the
  # symbolizer that names frames in sanitizer reports.
  packages+=(clang-19 libclang-rt-19-dev llvm-19)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# Node may come from outside Debian (e.g. a nodesource build that bundles npm and
# conflicts with Debian's npm package): a working node and npm are enough.
if command -v node >/dev/null && command -v npm >/dev/null; then
  kept=()
  for p in "${missing[@]}"; do
    [[ $p == nodejs || $p == npm ]] || kept+=("$p")
  done
  missing=("${kept[@]}")
fi

if ((${#missing[@]})); then
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  echo "install-deps: installing ${missing[*]}"
  # Servers come from packages (prometheus, rsyslog, slurm, munge) but the tests start
  # their own on 127.0.0.1: keep the maintainer scripts from starting the packaged
  # services (Prometheus would listen on every address at :9090) unless the machine
  # already has a policy of its own.
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
    "${sudo_cmd[@]}" chmod 755 "$policy"
    own_policy=1
  fi
  "${sudo_cmd[@]}" apt-get update -qq
  status=0
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" || status=$?
  if ((own_policy)); then "${sudo_cmd[@]}" rm -f "$policy"; fi
  ((status == 0)) || exit "$status"
fi

# The Slurm 24.11 chroot (/var/cache/gpufed-slurm24/rootfs, ~270 MB): built once from the
# host's Debian mirror (about a minute), then reused; a no-op when it is complete. Here
# rather than in the first test, so the tests' time stays the tests'. Needs root.
if [[ "${GPUFED_TEST_DEPS:-0}" == 1 ]]; then
  root_cmd=()
  if [[ $(id -u) -ne 0 ]]; then root_cmd=(sudo); fi
  "${root_cmd[@]}" "$(dirname "$0")/../tests/slurm/slurm24-rootfs.sh"
fi

# puppeteer-core for the browser tests, as tests/browser/package-lock.json pins it, into
# ~/.cache/gpufed-npm/browser (idempotent; puppeteer-core never downloads a browser). Here
# too, so the tests' time stays the tests'; the test installs it itself when missing.
if [[ "${GPUFED_TEST_DEPS:-0}" == 1 ]]; then
  "$(dirname "$0")/../tests/browser/install-modules.sh" >/dev/null ||
    echo "install-deps: warning: could not install puppeteer-core; the browser tests will try again" >&2
fi
