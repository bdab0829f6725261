#!/usr/bin/env bash
# Throwaway PKI for the audit integration tests (adapted from shared/recipes):
#   ca.crt/key            the test CA
#   server.crt/key        CN=localhost, SAN DNS:localhost, IP:127.0.0.1 (serverAuth)
#   client.crt/key        CN=client.fedtest (clientAuth), the permitted peer
#   rogue.crt/key         client.fedtest signed by an untrusted CA
#   intruder.crt/key      valid CA, name not permitted
# Usage: make-pki.sh DIR
set -euo pipefail
dir=$1
mkdir -p "$dir"
cd "$dir"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
openssl req -x509 "${ec[@]}" -days 2 -subj "/CN=gpufed-test-ca" -keyout ca.key -out ca.crt 2>/dev/null
openssl req -x509 "${ec[@]}" -days 2 -subj "/CN=rogue-ca" -keyout rogue-ca.key -out rogue-ca.crt 2>/dev/null
mk() {  # mk NAME CN SAN EKU [CA]
  local ca=${5:-ca}
  openssl req "${ec[@]}" -subj "/CN=$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf "subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n" "$3" "$4" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$ca.crt" -CAkey "$ca.key" -CAcreateserial -days 2 -extfile "$1.ext" \
    -out "$1.crt" 2>/dev/null
}
mk server localhost "DNS:localhost,IP:127.0.0.1" serverAuth
mk client client.fedtest "DNS:client.fedtest" clientAuth
mk rogue client.fedtest "DNS:client.fedtest" clientAuth rogue-ca
mk intruder intruder.fedtest "DNS:intruder.fedtest" clientAuth
chmod 600 ./*.key
