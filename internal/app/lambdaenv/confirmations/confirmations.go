// Package confirmations builds a Lambda's confirmations service: pending
// confirmations in the context table, their events in the events table
// (EVENTS_TABLE). The people kind's entry point and the chat's import it,
// so the chat links no other kind's entry point or routes.
package confirmations

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/confirm"
	dynamoconfirm "github.com/veredicto/veredicto/internal/confirm/dynamo"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
)

// EventsTable reads EVENTS_TABLE, which the confirmations need.
func EventsTable(getenv func(string) string) (string, error) {
	t := getenv("EVENTS_TABLE")
	if t == "" {
		return "", fmt.Errorf("configuration: EVENTS_TABLE is not set")
	}
	return t, nil
}

// New is the confirmations' service on AWS: pending confirmations in the
// context table, their events in eventsTable; withTasks, decisions are
// delivered to the waiting task through Step Functions (creating a
// confirmation never resumes one).
func New(cfg lambdaenv.Config, eventsTable string, ac aws.Config, withTasks bool) (*confirm.Service, error) {
	ddb, err := dynamodb.New(ac)
	if err != nil {
		return nil, err
	}
	var tasks confirm.TaskSender
	if withTasks {
		if tasks, err = sfn.New(ac); err != nil {
			return nil, err
		}
	}
	return &confirm.Service{Store: dynamoconfirm.New(ddb, cfg.ContextTable), Events: dynamoeventlog.New(ddb, eventsTable), Tasks: tasks}, nil
}
