// Package shim exposes the upstream random provider to the Pulumi bridge. It lives in a module
// whose path shares upstream's prefix, so upstream's internal/ packages are importable from here.
package shim

import (
	"github.com/hashicorp/terraform-plugin-framework/provider"

	upstream "github.com/terraform-providers/terraform-provider-random/internal/provider"
)

// NewProvider returns the upstream plugin-framework provider.
func NewProvider() provider.Provider {
	return upstream.New()
}
