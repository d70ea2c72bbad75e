package chatapp

import (
	"strings"
	"testing"
	"time"
)

func TestChatConfigFromEnv(t *testing.T) {
	env := map[string]string{"CHAT_DELEGATION_ONLY": "true", "DEBATE_STATE_MACHINE_ARN": "arn:debate"}
	get := func(k string) string { return env[k] }
	if _, err := chatConfigFromEnv(get, "ChatTurnFunction"); err == nil || !strings.Contains(err.Error(), "EVENTS_TABLE") {
		t.Errorf("without the confirmations' events table: %v", err)
	}
	env["EVENTS_TABLE"] = "events"
	if _, err := chatConfigFromEnv(get, "ChatFunction"); err == nil || !strings.Contains(err.Error(), "CHAT_TURNS_QUEUE_URL") {
		t.Errorf("ChatFunction without its queue: %v", err)
	}
	c, err := chatConfigFromEnv(get, "ChatTurnFunction")
	if err != nil || !c.DelegationOnly || c.DebugIntent || c.DebateARN != "arn:debate" || c.CompanionARN != "" || c.ConfirmWait != 12*time.Minute || c.EventsTable != "events" {
		t.Errorf("ChatTurnFunction config = %+v, %v", c, err)
	}
	if c.Options.ConfirmWait >= 15*time.Minute {
		t.Error("a confirmation may wait as long as the Lambda lives")
	}
}
