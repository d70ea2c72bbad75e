package auth

import "context"

// Principal is who a request speaks for, as authenticated: the person or
// service that signed it (a SigV4 key's name, a token's subject) and the
// scope it may act in. Every decision records Name; nothing a payload
// claims ever replaces it.
type Principal struct {
	// Name is who: the name a key was issued to ("ana", the OS user by
	// default; "queue", "chat"… for the server's own services), or a
	// token's sub ("tenant:<t>" when it has none).
	Name string
	// Tenant is the one tenant a tenant-scoped principal acts in; "" for
	// an operator.
	Tenant string
	// Operator principals manage state machines and see every tenant.
	Operator bool
	// Service marks the server's own principals (the queue consumer, the
	// chat, the confirmations service): keys "veredicto credentials" never
	// prints.
	Service bool
	// Via is how it was authenticated: "sigv4", "jwt" or "apigateway"
	// (claims an API Gateway authorizer verified).
	Via string
}

// Via values.
const (
	ViaSigV4      = "sigv4"
	ViaJWT        = "jwt"
	ViaAPIGateway = "apigateway"
)

// Scoped reports whether p may act in tenant: an operator in any, a tenant
// principal in its own.
func (p Principal) Scoped(tenant string) bool {
	return p.Operator || (p.Tenant != "" && p.Tenant == tenant)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying an authenticated principal.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal the middleware authenticated; false
// when the request carried no valid credentials.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok && p.Name != "" && (p.Operator || p.Tenant != "")
}

// FromClaims is the principal of verified token claims.
func FromClaims(c Claims, via string) Principal {
	name := c.Subject
	if name == "" {
		name = "tenant:" + c.Tenant
	}
	return Principal{Name: name, Tenant: c.Tenant, Via: via}
}

type failureKey struct{}

// WithFailure returns ctx carrying why the credentials a request presented
// were refused, for the surface that requires them to answer in its own
// shape.
func WithFailure(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, failureKey{}, err)
}

// FailureFrom is the refusal WithFailure recorded; nil when the request
// presented no credentials or valid ones.
func FailureFrom(ctx context.Context) error {
	err, _ := ctx.Value(failureKey{}).(error)
	return err
}
