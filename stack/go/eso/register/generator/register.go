// Package register stands in for ESO's pkg/generator/register when stack/build-binaries.sh builds the
// controller: the local stack uses no generator, so none is linked.
package register
