package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
)

// ModelBlobs keeps the tenants' intent models (blob.Store: the reports
// bucket on AWS, DATA/reports on this machine, with the same keys).
type ModelBlobs interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// ModelKey is where a tenant's promoted intent model is kept.
func ModelKey(tenant string) string { return "chat/models/" + tenant + "/model.json" }

// MaxCachedModels bounds the tenants' models held in memory at once.
const MaxCachedModels = 256

// IntentModels chooses the scorer of a tenant's turns: the tenant's
// promoted model when there is one, else the installation's Default model,
// else the registry's keyword heuristic. A model that cannot be read or
// was fitted for another registry is logged and skipped: a turn never
// fails for its scorer. Models are read at most once per TTL per tenant.
// Safe for concurrent use.
type IntentModels struct {
	Registry *Registry
	// Blobs holds the tenants' models (nil: none).
	Blobs ModelBlobs
	// Default is the installation's model (CHAT_INTENT_MODEL; nil: the
	// keyword heuristic).
	Default *IntentModel
	// TTL is how long a tenant's model is used before it is read again
	// (default one minute).
	TTL    time.Duration
	Logger *slog.Logger
	Now    func() time.Time

	mu    sync.Mutex
	cache map[string]cachedModel
}

type cachedModel struct {
	model *IntentModel // nil: the tenant has none
	at    time.Time
}

func (m *IntentModels) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// For returns the scorer of tenant's turns.
func (m *IntentModels) For(ctx context.Context, tenant string) Scorer {
	if model := m.tenantModel(ctx, tenant); model != nil {
		return model
	}
	if m.Default != nil {
		return m.Default
	}
	return m.Registry
}

// Tenant returns the tenant's promoted model (nil when it has none).
func (m *IntentModels) Tenant(ctx context.Context, tenant string) (*IntentModel, error) {
	if m.Blobs == nil {
		return nil, nil
	}
	b, err := m.Blobs.Get(ctx, ModelKey(tenant))
	var nf *veredicto.NotFoundError
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read intent model of %s: %w", tenant, err)
	}
	return m.Registry.LoadIntentModel(ModelKey(tenant), b)
}

func (m *IntentModels) tenantModel(ctx context.Context, tenant string) *IntentModel {
	if m.Blobs == nil {
		return nil
	}
	ttl := m.TTL
	if ttl <= 0 {
		ttl = time.Minute
	}
	m.mu.Lock()
	c, ok := m.cache[tenant]
	m.mu.Unlock()
	if ok && m.now().Sub(c.at) < ttl {
		return c.model
	}
	model, err := m.Tenant(ctx, tenant)
	if err != nil {
		logger := m.Logger
		if logger == nil {
			logger = slog.Default()
		}
		logger.WarnContext(ctx, "intent model skipped", "tenant", tenant, "error", err)
		model = nil
	}
	m.mu.Lock()
	if m.cache == nil || len(m.cache) >= MaxCachedModels {
		m.cache = map[string]cachedModel{}
	}
	m.cache[tenant] = cachedModel{model: model, at: m.now()}
	m.mu.Unlock()
	return model
}

// Promote keeps model as the tenant's: its next turns use it.
func (m *IntentModels) Promote(ctx context.Context, tenant string, model *IntentModel) error {
	if m.Blobs == nil {
		return errors.New("promote intent model: no model store")
	}
	b, err := model.Encode()
	if err != nil {
		return err
	}
	if err := m.Blobs.Put(ctx, ModelKey(tenant), b, "application/json"); err != nil {
		return fmt.Errorf("promote intent model of %s: %w", tenant, err)
	}
	m.mu.Lock()
	delete(m.cache, tenant)
	m.mu.Unlock()
	return nil
}
