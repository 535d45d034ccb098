"""The local stack: real servers (etcd, kube-apiserver, Keystone on MariaDB, OpenBao, K-ORC, ESO) on loopback."""
