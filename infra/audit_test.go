package infra

import (
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/catalog/function"
)

// auditObjects is the resource of the audit records in the reports bucket.
var auditObjects = map[string]any{"Fn::Sub": "${ReportsBucket.Arn}/audit/*"}

// TestAuditRecordsAreLockedAndOnlyTheOperatorErases: the reports bucket
// has Object Lock (no default retention: only audit/ objects are locked,
// by their writer); every search function is told the retention and may
// set it on audit/ objects; the bucket policy denies everyone but
// AuditOperatorRole deleting an audit object or bypassing its retention,
// a put that could overwrite one, and a lock other than GOVERNANCE; no
// function may bypass a retention; and the operator role may.
func TestAuditRecordsAreLockedAndOnlyTheOperatorErases(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	bucket := tpl.Resources["ReportsBucket"].Properties
	lock := asMap(bucket["ObjectLockConfiguration"])
	if bucket["ObjectLockEnabled"] != true || lock["ObjectLockEnabled"] != "Enabled" || asMap(bucket["VersioningConfiguration"])["Status"] != "Enabled" {
		t.Errorf("ReportsBucket: ObjectLockEnabled %v, ObjectLockConfiguration %v, versioning %v; want Object Lock on a versioned bucket",
			bucket["ObjectLockEnabled"], lock, bucket["VersioningConfiguration"])
	}
	if lock["Rule"] != nil {
		t.Errorf("ReportsBucket has a default retention %v: it would lock the reports and context values too; the audit store locks its own objects", lock["Rule"])
	}

	param := tpl.Parameters["AuditRetentionDays"]
	if lo, _ := num(param["MinValue"]); lo < 1 {
		t.Errorf("AuditRetentionDays.MinValue %v, want at least 1 (the functions refuse 0)", param["MinValue"])
	}
	if hi, _ := num(param["MaxValue"]); hi > lambdaenv.MaxAuditRetentionDays || hi == 0 {
		t.Errorf("AuditRetentionDays.MaxValue %v, want at most %d (what the functions accept)", param["MaxValue"], lambdaenv.MaxAuditRetentionDays)
	}
	for _, f := range catalog.Of(function.KindSearch) {
		props := tpl.functionProperties(f.LogicalID)
		if v, _ := refTo(asMap(asMap(props["Environment"])["Variables"])["AUDIT_RETENTION_DAYS"]); v != "AuditRetentionDays" {
			t.Errorf("%s: AUDIT_RETENTION_DAYS is not !Ref AuditRetentionDays", f.LogicalID)
		}
		if !allows(statements(map[string]cfnResource{f.LogicalID: tpl.Resources[f.LogicalID]}), "s3:PutObjectRetention", auditObjects) {
			t.Errorf("%s records audit entries with a retention but may not s3:PutObjectRetention on audit/*", f.LogicalID)
		}
	}
	for _, id := range tpl.resourcesOfType("AWS::Serverless::Function") {
		for _, st := range statements(map[string]cfnResource{id: tpl.Resources[id]}) {
			for _, a := range stringsOf(st.stmt["Action"]) {
				if st.stmt["Effect"] == "Allow" && (a == "s3:BypassGovernanceRetention" || a == "s3:DeleteObjectVersion") {
					t.Errorf("%s: a function is allowed %s", st.where, a)
				}
			}
		}
	}

	policy := statements(map[string]cfnResource{"ReportsBucketPolicy": tpl.Resources["ReportsBucketPolicy"]})
	operator := map[string]any{"aws:PrincipalArn": map[string]any{"Fn::GetAtt": []any{"AuditOperatorRole", "Arn"}}}
	if !denies(policy, []string{"s3:DeleteObject", "s3:DeleteObjectVersion", "s3:BypassGovernanceRetention"}, "ArnNotEquals", operator) {
		t.Error("ReportsBucketPolicy does not deny deleting audit objects or bypassing their retention to all but AuditOperatorRole")
	}
	if !denies(policy, []string{"s3:PutObject"}, "Null", map[string]any{"s3:if-none-match": "true"}) {
		t.Error("ReportsBucketPolicy does not deny puts to audit/ without If-None-Match")
	}
	if !denies(policy, []string{"s3:PutObject", "s3:PutObjectRetention"}, "StringNotEquals", map[string]any{"s3:object-lock-mode": "GOVERNANCE"}) {
		t.Error("ReportsBucketPolicy does not deny audit objects locked otherwise than in GOVERNANCE mode")
	}

	role := statements(map[string]cfnResource{"AuditOperatorRole": tpl.Resources["AuditOperatorRole"]})
	for _, a := range []string{"s3:BypassGovernanceRetention", "s3:PutObject", "s3:PutObjectRetention"} {
		if !allows(role, a, auditObjects) {
			t.Errorf("AuditOperatorRole may not %s on audit/*: it could not erase records or write tombstones", a)
		}
	}
	if !allows(role, "s3:DeleteObjectVersion", map[string]any{"Fn::Sub": "${ReportsBucket.Arn}/*"}) ||
		!allows(role, "s3:DeleteObjectVersion", map[string]any{"Fn::Sub": "${InputsBucket.Arn}/*"}) ||
		!allows(role, "dynamodb:DeleteItem", map[string]any{"Fn::GetAtt": []any{"ContextTable", "Arn"}}) {
		t.Error("AuditOperatorRole may not erase every version of documents and reports, or the stage records")
	}
	if _, ok := tpl.Outputs["AuditOperatorRoleArn"]; !ok {
		t.Error("no output AuditOperatorRoleArn: the operator needs it to purge")
	}
}

// allows reports whether a statement allows action on resource.
func allows(sts []located, action string, resource any) bool {
	for _, st := range sts {
		if st.stmt["Effect"] == "Allow" && slices.Contains(stringsOf(st.stmt["Action"]), action) && hasResource(st.stmt["Resource"], resource) {
			return true
		}
	}
	return false
}

// denies reports whether one Deny statement for every principal denies all
// of actions on the audit objects under the condition op: cond.
func denies(sts []located, actions []string, op string, cond map[string]any) bool {
	for _, st := range sts {
		if st.stmt["Effect"] != "Deny" || st.stmt["Principal"] != "*" || !hasResource(st.stmt["Resource"], auditObjects) {
			continue
		}
		got := stringsOf(st.stmt["Action"])
		if !slices.ContainsFunc(actions, func(a string) bool { return !slices.Contains(got, a) }) &&
			reflect.DeepEqual(asMap(st.stmt["Condition"])[op], cond) {
			return true
		}
	}
	return false
}

func hasResource(v any, want any) bool {
	if l := asList(v); l != nil {
		return slices.ContainsFunc(l, func(r any) bool { return reflect.DeepEqual(r, want) })
	}
	return reflect.DeepEqual(v, want)
}
