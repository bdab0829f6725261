# Sourced by the tests of this folder: what a test of several `gpufed run --store`
# replicas sets up before it starts them.
#   ha_fleet DIR NODES   a Git repository in DIR/repo: one sim cluster `lyon` of NODES nodes
#                        of 4 A100s and the tenant `genomics`; DIR/tokens with an admin
#                        token ($ADMIN) and a genomics token ($TENANT); one audit key in
#                        DIR/key (every replica signs the one journal with it)
#   free_port            a free TCP port on 127.0.0.1

ADMIN=admin-0123456789abcdef0123
TENANT=geno-0123456789abcdef0123

ha_fleet() {
  local dir=$1 nodes=$2
  mkdir -p "$dir/repo"
  cat >"$dir/repo/fleet.yaml" <<YAML
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: lyon}
spec:
  provider: onprem
  region: eu-west
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: $nodes, cpu: 32, memory: 256Gi, gpu: {model: A100-40GB, count: 4, memory: 40Gi}}
  pricing: {currency: EUR, gpuHour: {A100-40GB: "0.80"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: genomics}
spec:
  quota: {maxGpus: 64}
  budget: {period: monthly, limit: "50000 EUR"}
YAML
  git -C "$dir/repo" init -q
  git -C "$dir/repo" add -A
  git -C "$dir/repo" -c user.email=t@t -c user.name=t commit -qm fleet
  printf '%s admin ops\n%s genomics geno-ci\n' "$ADMIN" "$TENANT" >"$dir/tokens"
  chmod 600 "$dir/tokens"
  "$G" audit keygen --out "$dir/key" >/dev/null
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
