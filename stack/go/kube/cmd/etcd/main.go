// Command etcd runs the etcd server at the version k8s.io/kubernetes pins, so the
// local stack's storage matches what its kube-apiserver was tested against.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
