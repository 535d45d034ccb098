#!/usr/bin/env bash
# Builds the Go servers of the local stack from the pinned modules under stack/go/ into a cache
# outside the checkout, keyed by version, so only the first build on a machine is slow.
# Usage: stack/build-binaries.sh [kube|korc|eso|node|cni|all]  (all leaves node out when C5C3_SKIP_PARTS names it;
# node includes cni, the node's CNI plugins)
# Builds run under `nice -n 10` (C5C3_BUILD_NICE): the machine is shared.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${C5C3_CACHE:-$HOME/.cache/c5c3-orders}/bin"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
nice_level="${C5C3_BUILD_NICE:-10}"

version_of() {  # the pinned version of module $2 in stack/go/$1/go.mod
  awk -v m="$2" '$1 == "require" && $2 == m {print $3} $1 == m {print $2}' "$here/go/$1/go.mod" | head -1
}

build() {  # build <wrapper> <outdir> <name> <package> [expected cold duration]
  # One build may set LDX (more -ldflags), TAGS (build tags) and CGO (1 for cgo) in front of the call.
  local dir="$1" out="$2" name="$3" pkg="$4" expect="${5:-}"
  if [ -x "$out/$name" ]; then echo "cached: $out/$name"; return 0; fi
  mkdir -p "$out"
  if [ -n "$expect" ]; then
    echo "building: $name (expect ~$expect on a first run on 2 cores; seconds when the Go build cache is warm)"
  fi
  local t0; t0=$(date +%s)
  (cd "$here/go/$dir" && CGO_ENABLED="${CGO:-0}" nice -n "$nice_level" \
    go build -trimpath -tags "${TAGS:-}" -ldflags="-s -w ${LDX:-}" -o "$out/$name.tmp" "$pkg")
  mv "$out/$name.tmp" "$out/$name"
  echo "built: $out/$name in $(( $(date +%s) - t0 ))s"
}

kube() {
  local v; v=$(version_of kube k8s.io/kubernetes); local out="$cache/kubernetes-$v"
  build kube "$out" etcd ./cmd/etcd "65 s, downloads included"
  build kube "$out" kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "3.5 min"
  build kube "$out" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "50 s"
  if [ "${C5C3_BUILD_KUBECTL:-auto}" = always ] || ! command -v kubectl >/dev/null 2>&1; then
    build kube "$out" kubectl k8s.io/kubernetes/cmd/kubectl "1 min"
  fi
}
korc() {
  local v; v=$(version_of korc github.com/k-orc/openstack-resource-controller/v2)
  build korc "$cache/korc-$v" manager github.com/k-orc/openstack-resource-controller/v2/cmd/manager "100 s"
}
eso() {  # only the providers the stack uses: ESO's controllers link every provider and generator through two
  # register packages; a copy of the pinned module with those two replaced by stack/go/eso/register/ halves the build
  local out; out=$(eso_out)
  if [ -x "$out/external-secrets" ]; then echo "cached: $out/external-secrets"; return 0; fi
  local work; work=$(eso_source "$out.src")
  GOFLAGS="$GOFLAGS -modfile=$work/mod/go.mod" build eso "$out" external-secrets \
    github.com/external-secrets/external-secrets "80 s (the Vault and Kubernetes providers only)"
  rm -rf "$work"
}
eso_out() {  # where the trimmed ESO build goes, keyed by the pinned version
  echo "$cache/eso-vault-$(version_of eso github.com/external-secrets/external-secrets)"
}
eso_source() {  # eso_source <dir>: the trimmed copy of the module and the go.mod that points at it; prints <dir>
  local work="$1" src
  if [ -f "$work/.complete" ]; then echo "$work"; return 0; fi
  src=$(cd "$here/go/eso" && go mod download -json github.com/external-secrets/external-secrets \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src" ] || { echo "go mod download left no source of github.com/external-secrets/external-secrets" >&2; return 1; }
  rm -rf "$work"; mkdir -p "$work"
  cp -r "$src" "$work/external-secrets" && chmod -R u+w "$work/external-secrets"
  cp "$here/go/eso/register/provider/register.go" "$work/external-secrets/pkg/provider/register/register.go"
  cp "$here/go/eso/register/generator/register.go" "$work/external-secrets/pkg/generator/register/register.go"
  mkdir "$work/mod" && cp "$here/go/eso/go.mod" "$here/go/eso/go.sum" "$work/mod/"
  echo "replace github.com/external-secrets/external-secrets => $work/external-secrets" >> "$work/mod/go.mod"
  touch "$work/.complete"; echo "$work"
}

prefetch() {  # the modules of the builds after the first, downloaded while it compiles (network beside CPU)
  local v
  v=$(version_of korc github.com/k-orc/openstack-resource-controller/v2)
  [ -x "$cache/korc-$v/manager" ] || (cd "$here/go/korc" && go list -e -deps \
    github.com/k-orc/openstack-resource-controller/v2/cmd/manager)
  if [ ! -x "$(eso_out)/external-secrets" ]; then
    local work; work=$(eso_source "$(eso_out).src")
    (cd "$here/go/eso" && go list -e -modfile="$work/mod/go.mod" -deps github.com/external-secrets/external-secrets)
  fi
  v=$(version_of containerd github.com/containerd/containerd/v2)
  [ -x "$cache/containerd-$v/ctr" ] || (cd "$here/go/containerd" && go list -e -deps \
    github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/ctr)
  v=$(version_of runc github.com/opencontainers/runc)
  [ -x "$cache/runc-$v/runc" ] || (cd "$here/go/runc" && go list -e -deps github.com/opencontainers/runc)
  v=$(version_of cni github.com/containernetworking/plugins)
  [ -x "$cache/cni-plugins-$v/bridge" ] || (cd "$here/go/cni" && go list -e -deps \
    github.com/containernetworking/plugins/plugins/main/bridge)
}

node() {  # the local stack's node (stack/c5c3stack/node.py): kubelet, kube-scheduler, containerd, runc, images
  local v; v=$(version_of kube k8s.io/kubernetes); local minor="${v#v1.}"; minor="${minor%%.*}"
  local kv="-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1"
  kv="$kv -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"
  LDX="$kv" build kube "$cache/kubernetes-$v" kubelet k8s.io/kubernetes/cmd/kubelet "20 s after the API server; 3.5 min alone"
  LDX="$kv" build kube "$cache/kubernetes-$v" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "5 s after the kubelet"
  local cv; cv=$(version_of containerd github.com/containerd/containerd/v2); local c="$cache/containerd-$cv"
  local cx="-X github.com/containerd/containerd/v2/version.Version=$cv"
  LDX="$cx" build containerd "$c" containerd github.com/containerd/containerd/v2/cmd/containerd "45 s"
  LDX="$cx" build containerd "$c" containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 "5 s"
  LDX="$cx" build containerd "$c" ctr github.com/containerd/containerd/v2/cmd/ctr "10 s"
  # runc needs cgo (its nsenter is C) and, for seccomp (RuntimeDefault profiles), libseccomp-dev
  local rv; rv=$(version_of runc github.com/opencontainers/runc)
  if [ ! -x "$cache/runc-$rv/runc" ] && ! pkg-config --exists libseccomp 2>/dev/null; then
    echo "runc needs libseccomp-dev (Debian 12 has it: apt-get install libseccomp-dev; make deps does)" >&2
    return 1
  fi
  CGO=1 TAGS=seccomp LDX="-X main.version=${rv#v}" build runc "$cache/runc-$rv" runc github.com/opencontainers/runc "10 s"
  # the pause and probe images' programs, keyed by a hash of their source (they are ours, unversioned)
  local src; src=$(cd "$here/go/nodeimages" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
  build nodeimages "$cache/nodeimages-$src" pause ./cmd/pause "5 s"
  build nodeimages "$cache/nodeimages-$src" probe ./cmd/probe "5 s"
  cni
}

cni() {  # the node's Pod network (stack/c5c3stack/node.py): the bridge plugin, its IPAM, and the loopback
  # plugin containerd's CRI runs for every pod sandbox; node.py links them into containerd's bin_dirs
  local v; v=$(version_of cni github.com/containernetworking/plugins); local out="$cache/cni-plugins-$v"
  local m=github.com/containernetworking/plugins/plugins
  local px="-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$v"
  LDX="$px" build cni "$out" bridge "$m/main/bridge" "5 s after containerd; 40 s alone"
  LDX="$px" build cni "$out" host-local "$m/ipam/host-local" "5 s"
  LDX="$px" build cni "$out" loopback "$m/main/loopback" "2 s"
}

case "${1:-all}" in
  kube) kube ;; korc) korc ;; eso) eso ;; node) node ;; cni) cni ;;
  all) prefetch >/dev/null 2>&1 & fetching=$!
       kube; wait "$fetching" || true; korc; eso
       skip="${C5C3_SKIP_PARTS:-}"
       case " ${skip//,/ } " in *" node "*) echo "skipped: node (C5C3_SKIP_PARTS)" ;; *) node ;; esac ;;
  *) echo "usage: $0 [kube|korc|eso|node|cni|all]" >&2; exit 2 ;;
esac
