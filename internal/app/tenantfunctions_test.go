package app

import "testing"

// TestTenantKeysInvokeOnlyTasks: through the local Lambda Invoke API a
// tenant's key reaches the workflows' Tasks only. The functions an event
// source invokes take their identity from the source (a tenant could
// write another tenant in an SQS body, an S3 key, an EventBridge detail or
// a JWT claim), and ConfirmFunction records a person's question: an
// operator's.
func TestTenantKeysInvokeOnlyTasks(t *testing.T) {
	tenant := tenantFunctions()
	for _, name := range []string{"TriggerFunction", "ChatTurnFunction", "ChatLinkFunction", "ConfirmFunction",
		"ApiFunction", "ChatFunction", "ConfirmationsFunction", "StreamFunction", "CompanionApiFunction", "DebateApiFunction", "FlagsFunction"} {
		if tenant[name] {
			t.Errorf("a tenant's key may invoke %s", name)
		}
	}
	for _, name := range []string{"Gem1Function", "ReportFunction", "CompanionScoringFunction", "DebateVoteFunction"} {
		if !tenant[name] {
			t.Errorf("a tenant's key may not invoke the Task %s", name)
		}
	}
}
