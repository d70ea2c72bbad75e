package sfnapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/poll"
)

// pass10 is a chain of 10 Pass states.
func pass10() string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"P0","States":{`)
	for i := range 10 {
		if i > 0 {
			b.WriteString(",")
		}
		next := fmt.Sprintf(`"Next":"P%d"`, i+1)
		if i == 9 {
			next = `"End":true`
		}
		fmt.Fprintf(&b, `"P%d":{"Type":"Pass","Result":%d,"ResultPath":"$.p%d",%s}`, i, i, i, next)
	}
	b.WriteString("}}")
	return b.String()
}

// BenchmarkStartExecutionPass10 starts executions of a 10-state Pass machine
// through the API with the sfn client, from 8 concurrent callers, and
// reports how many were started per second (StartExecution answered: the
// execution is recorded on disk and running) and how many finished per
// second. Reproduce with
// go test -run '^$' -bench StartExecution -benchtime 2000x ./internal/sfnapi
func BenchmarkStartExecutionPass10(b *testing.B) {
	p := newPeer(b)
	ctx := context.Background()
	out, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Pass10"), Definition: aws.String(pass10()), RoleArn: aws.String(role)})
	if err != nil {
		b.Fatal(err)
	}
	smARN := out.StateMachineArn
	var n atomic.Int64
	b.SetParallelism(4) // 4 × GOMAXPROCS callers
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if _, err := p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: smARN, Name: aws.String(fmt.Sprintf("e-%d", i)), Input: aws.String(`{"tenant":"bench"}`)}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	started := time.Since(start)
	poll.Until(b, 10*time.Minute, func() bool {
		l, err := p.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: smARN, StatusFilter: types.ExecutionStatusRunning, MaxResults: 1})
		if err != nil {
			b.Fatal(err)
		}
		return len(l.Executions) == 0
	}, "every execution to finish")
	finished := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/started.Seconds(), "started/s")
	b.ReportMetric(float64(b.N)/finished.Seconds(), "finished/s")
}
