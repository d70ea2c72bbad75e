// Package chatlinkapp is the Lambda entry point of ChatLinkFunction
// (function.KindChatLink, issue 32): the status changes of the executions
// a conversation started, said in that conversation. It builds the chat's
// links on the two DynamoDB tables and a Step Functions client that only
// describes executions (a status change EventBridge sent without the
// input or output it needs); no S3 or LLM client, never internal/app (the
// local composition root) nor the HTTP API.
package chatlinkapp

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/awsclient/sfn"
	"github.com/veredicto/veredicto/internal/catalog/chatlinkfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/chat"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	"github.com/veredicto/veredicto/internal/store/dynamo"
)

// Services builds the function's services: the links in the context
// table (chatlink/<tenant>/… keys, as ChatTurnFunction keeps them), the
// conversations' streams in the events table. Links are small: the
// context store needs no bucket for large values.
func Services(cfg lambdaenv.Config, ac aws.Config) (*chatlinkfn.Services, error) {
	if cfg.EventsTable == "" {
		return nil, fmt.Errorf("configuration: EVENTS_TABLE is not set")
	}
	ddb, err := dynamodb.New(ac)
	if err != nil {
		return nil, err
	}
	sfnClient, err := sfn.New(ac)
	if err != nil {
		return nil, err
	}
	events := dynamoeventlog.New(ddb, cfg.EventsTable)
	return &chatlinkfn.Services{Links: &chat.Links{Store: dynamo.New(ddb, cfg.ContextTable, nil), Events: events, Log: events,
		Describe: chat.DescribeWith(sfnClient)}}, nil
}

// Start runs ChatLinkFunction, the target of the EventBridge rule on the
// project's state machines' "Step Functions Execution Status Change".
func Start(logicalID string) {
	lambdaenv.Start(logicalID, function.KindChatLink, chatlinkfn.Functions, func(_ context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		return Services(cfg, ac)
	})
}
