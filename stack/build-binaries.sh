#!/usr/bin/env bash
# Builds the Go servers of the local stack from the pinned modules under stack/go/ into a cache
# outside the checkout, keyed by version, so only the first build on a machine is slow.
# Usage: stack/build-binaries.sh [kube|korc|eso|all]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${C5C3_CACHE:-$HOME/.cache/c5c3-orders}/bin"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0

version_of() {  # the pinned version of module $2 in stack/go/$1/go.mod
  awk -v m="$2" '$1 == "require" && $2 == m {print $3} $1 == m {print $2}' "$here/go/$1/go.mod" | head -1
}

build() {  # build <wrapper> <outdir> <name> <package>
  local dir="$1" out="$2" name="$3" pkg="$4"
  if [ -x "$out/$name" ]; then echo "cached: $out/$name"; return 0; fi
  mkdir -p "$out"
  local t0; t0=$(date +%s)
  (cd "$here/go/$dir" && go build -trimpath -ldflags="-s -w" -o "$out/$name.tmp" "$pkg")
  mv "$out/$name.tmp" "$out/$name"
  echo "built: $out/$name in $(( $(date +%s) - t0 ))s"
}

kube() {
  local v; v=$(version_of kube k8s.io/kubernetes); local out="$cache/kubernetes-$v"
  build kube "$out" etcd ./cmd/etcd
  build kube "$out" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
  build kube "$out" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
  if [ "${C5C3_BUILD_KUBECTL:-auto}" = always ] || ! command -v kubectl >/dev/null 2>&1; then
    build kube "$out" kubectl k8s.io/kubernetes/cmd/kubectl
  fi
}
korc() {
  local v; v=$(version_of korc github.com/k-orc/openstack-resource-controller/v2)
  build korc "$cache/korc-$v" manager github.com/k-orc/openstack-resource-controller/v2/cmd/manager
}
eso() {
  local v; v=$(version_of eso github.com/external-secrets/external-secrets)
  build eso "$cache/eso-$v" external-secrets github.com/external-secrets/external-secrets
}

case "${1:-all}" in
  kube) kube ;; korc) korc ;; eso) eso ;;
  all) kube; korc; eso ;;
  *) echo "usage: $0 [kube|korc|eso|all]" >&2; exit 2 ;;
esac
