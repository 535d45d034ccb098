// Package register stands in for ESO's pkg/provider/register when stack/build-binaries.sh builds the
// controller: ESO's controllers import that package for its side effects, and upstream it links every
// provider (cloud SDKs that make up half of the build). The local stack's SecretStores use Vault (OpenBao)
// only; the kubernetes provider stays for a SecretStore a test may point at the cluster itself.
package register

import (
	_ "github.com/external-secrets/external-secrets/pkg/provider/kubernetes"
	_ "github.com/external-secrets/external-secrets/pkg/provider/vault"
)
