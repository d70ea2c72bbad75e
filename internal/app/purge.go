package app

import (
	"context"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/s3audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/erasure"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/store/dynamo"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// LocalErasure erases tenants' data under a serve data folder (LocalLayout):
// DATA/inputs, DATA/reports (the audit records under reports/audit),
// DATA/context, DATA/chats (a whole tenant's), and each purged execution's confirmations and event
// stream (DATA/confirmations, DATA/events).
func LocalErasure(dir string) *erasure.Service {
	in, rep, kv := LocalLayout(dir)
	folders := &audit.Folders{Root: filepath.Join(rep, AuditPrefix)}
	return &erasure.Service{Inputs: fileblob.NewDir(in), Reports: fileblob.NewDir(rep), Context: filestore.NewLocal(kv),
		Others:      []erasure.Eraser{filestore.NewLocal(ChatDir(dir))},
		ByExecution: []erasure.ExecutionEraser{fileconfirm.Local(dir), fileeventlog.Local(dir)},
		Audit: erasure.Records{
			List: func(_ context.Context, tenant string) ([]string, error) { return folders.Executions(tenant) },
			Open: func(tenant, execution string) erasure.Record { return audit.NewDir(folders.Path(tenant, execution)) },
		}}
}

// AWSStorage names a stack's storage (its outputs InputsBucketName,
// ReportsBucketName and ContextTableName).
type AWSStorage struct {
	InputsBucket, ReportsBucket, ContextTable string
	// Retention locks each tombstone written in GOVERNANCE mode, like
	// the records (the stack's AuditRetentionDays).
	Retention time.Duration
}

// AWSErasure erases tenants' data in a stack's buckets and table: every
// version of the documents and reports, the stage and search records with
// their large values, and the audit records, whose retention it bypasses
// (it must run as the stack's AuditOperatorRole).
func AWSErasure(ac aws.Config, st AWSStorage) *erasure.Service {
	s3c := s3.NewFromConfig(ac)
	reports := &s3blob.Eraser{Client: s3c, Bucket: st.ReportsBucket}
	records := &s3audit.Records{Client: s3c, Bucket: st.ReportsBucket, Retention: st.Retention}
	return &erasure.Service{Inputs: &s3blob.Eraser{Client: s3c, Bucket: st.InputsBucket}, Reports: reports,
		Context: &dynamo.Eraser{Client: dynamodb.NewFromConfig(ac), Table: st.ContextTable, Large: reports.Erase},
		Audit: erasure.Records{
			List: records.Executions,
			Open: func(tenant, execution string) erasure.Record { return records.Store(tenant, execution) },
		}}
}

// ChatDir is where a data folder keeps the chat's store: conversations,
// claims, links and the delegation feedback.
func ChatDir(data string) string { return filepath.Join(data, "chats") }
