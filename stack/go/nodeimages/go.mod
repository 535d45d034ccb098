// The two programs of the node's local images: the pod sandbox ("pause") and a probe for tests. Standard library only.
module c5c3.io/orders/stack/nodeimages

go 1.25.0
