package auth

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Credentials signs requests with the access key of a name from Keys, so a
// service of the local server calls its Step Functions API as itself: an
// aws.CredentialsProvider. A spec with neither a tenant nor the operator
// scope signs with the name's key for the tenant the request's context
// acts for (ActingFor), created on first use.
type Credentials struct {
	Keys *Keys
	Spec KeySpec
}

var _ aws.CredentialsProvider = (*Credentials)(nil)

// Retrieve returns the key's credentials.
func (c *Credentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	spec := c.Spec
	if spec.Tenant == "" && !spec.Operator {
		t, ok := ctx.Value(actingKey{}).(string)
		if !ok || t == "" {
			return aws.Credentials{}, fmt.Errorf("credentials of %s: the request acts for no tenant", spec.Name)
		}
		spec.Tenant = t
	}
	k, err := c.Keys.Ensure(spec)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("credentials of %s: %w", spec.Name, err)
	}
	return aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey, Source: "veredicto:" + k.Name}, nil
}

type actingKey struct{}

// ActingFor returns ctx in which a tenant-scoped service acts for tenant.
func ActingFor(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, actingKey{}, tenant)
}
