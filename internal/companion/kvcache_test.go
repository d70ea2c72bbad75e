package companion

import (
	"context"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/store/file"
)

// TestKVCacheKeepsEveryClassificationAndReadsTheNewest: on the write-once
// context store a refresh's classification is a new version, and the next
// drift check compares with it, not with the first one.
func TestKVCacheKeepsEveryClassificationAndReadsTheNewest(t *testing.T) {
	ctx := context.Background()
	kv := file.NewMemory()
	cache := KVCache{KV: kv, Tenant: "acme"}
	hash := strings.Repeat("ab", 32)
	if _, ok, err := cache.GetClassification(ctx, hash); ok || err != nil {
		t.Fatalf("empty cache: ok %v, err %v", ok, err)
	}
	for i, id := range []string{"first", "second", "third"} {
		c := Classification{Requirements: []ClassifiedRequirement{{Requirement: id}}}
		if err := cache.PutClassification(ctx, hash, c); err != nil {
			t.Fatal(err)
		}
		got, ok, err := cache.GetClassification(ctx, hash)
		if err != nil || !ok || len(got.Requirements) != 1 || got.Requirements[0].Requirement != id {
			t.Fatalf("after put %d: %+v %v %v, want %s", i+1, got, ok, err, id)
		}
	}
	// The first classification stays where it always was; nothing was
	// overwritten.
	for key, want := range map[string]string{
		"companion/acme/classifications/" + hash:         "first",
		"companion/acme/classifications/" + hash + "/v2": "second",
		"companion/acme/classifications/" + hash + "/v3": "third",
	} {
		b, ok, err := kv.Get(ctx, key)
		if err != nil || !ok || !strings.Contains(string(b), `"`+want+`"`) {
			t.Errorf("%s: %s %v %v, want %s", key, b, ok, err, want)
		}
	}
	// Another tenant's classification answers like a missing one.
	if _, ok, _ := (KVCache{KV: kv, Tenant: "other"}).GetClassification(ctx, hash); ok {
		t.Error("tenant other reads acme's classification")
	}
}

func TestKVCacheBoundsTheVersions(t *testing.T) {
	ctx := context.Background()
	cache := KVCache{KV: file.NewMemory(), Tenant: "acme"}
	hash := strings.Repeat("cd", 32)
	for i := range MaxClassificationVersions {
		if err := cache.PutClassification(ctx, hash, Classification{}); err != nil {
			t.Fatalf("put %d: %v", i+1, err)
		}
	}
	err := cache.PutClassification(ctx, hash, Classification{})
	if err == nil || !strings.Contains(err.Error(), "64 classifications") || !strings.Contains(err.Error(), hash) {
		t.Fatalf("put beyond the bound: %v", err)
	}
}
