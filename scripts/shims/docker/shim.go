// Package shim exposes the upstream docker provider to the Pulumi bridge. It lives in a module
// whose path shares upstream's prefix, so upstream's internal/ packages are importable from here.
package shim

import (
	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema"

	upstream "github.com/terraform-providers/terraform-provider-docker/internal/provider"
)

// NewProvider returns the upstream SDKv2 provider; the bridge stamps its own version.
func NewProvider() *schema.Provider {
	return upstream.New("dev")()
}
