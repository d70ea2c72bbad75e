package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/veredicto/veredicto"
)

// DirOutbox is the local Outbox: each message is one JSON file under
// <dir>/<tenant>/<id>.json, written to a temporary file and renamed, so a
// reader never sees half a message; sending the same id again is a no-op
// (a retried turn sends once).
type DirOutbox struct{ Dir string }

var _ Outbox = DirOutbox{}

// Send writes the message.
func (o DirOutbox) Send(_ context.Context, tenant string, m Outgoing) (string, error) {
	if !ValidChatID(m.ID) || !veredicto.ValidID(tenant) {
		return "", fmt.Errorf("outbox: bad tenant or message id")
	}
	dir := filepath.Join(o.Dir, tenant)
	path := filepath.Join(dir, m.ID+".json")
	if _, err := os.Stat(path); err == nil {
		return m.ID, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("outbox %s: %w", m.ID, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return "", fmt.Errorf("outbox %s: %w", m.ID, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("outbox %s: %w", m.ID, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("outbox %s: %w", m.ID, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("outbox %s: %w", m.ID, err)
	}
	return m.ID, nil
}

// BlobPutter writes a blob (the reports bucket on AWS).
type BlobPutter interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// BlobOutbox is the AWS Outbox: each message is one JSON object at
// outbox/<tenant>/<id>.json in a bucket, for the mail gateway to deliver;
// the same id again is not written twice.
type BlobOutbox struct{ Blobs BlobPutter }

var _ Outbox = BlobOutbox{}

// Send writes the message.
func (o BlobOutbox) Send(ctx context.Context, tenant string, m Outgoing) (string, error) {
	if !ValidChatID(m.ID) || !veredicto.ValidID(tenant) {
		return "", fmt.Errorf("outbox: bad tenant or message id")
	}
	key := "outbox/" + tenant + "/" + m.ID + ".json"
	if _, err := o.Blobs.Get(ctx, key); err == nil {
		return m.ID, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	if err := o.Blobs.Put(ctx, key, b, "application/json"); err != nil {
		return "", fmt.Errorf("outbox %s: %w", m.ID, err)
	}
	return m.ID, nil
}
