package sfnapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// BenchmarkGetActivityTask measures what an activity worker sees: a
// worker loops on GetActivityTask and SendTaskSuccess through the real
// sfn client while executions of a one-activity machine are started one
// after the other, each once the worker has answered the one before. It
// reports the latency from StartExecution answered to GetActivityTask
// answered with that execution's task (p50, p99: the task scheduled by
// the engine, handed to the waiting poll, its ActivityStarted fsynced),
// and ns/op for the whole loop (start, take, answer). Reproduce with
// go test -run '^$' -bench GetActivityTask -benchtime 500x ./internal/sfnapi
func BenchmarkGetActivityTask(b *testing.B) {
	p := newPeer(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	act, err := p.client.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("bench")})
	if err != nil {
		b.Fatal(err)
	}
	def := `{"StartAt":"Work","States":{"Work":{"Type":"Task","Resource":"` + aws.ToString(act.ActivityArn) + `","End":true}}}`
	sm, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Bench"), Definition: aws.String(def), RoleArn: aws.String(role)})
	if err != nil {
		b.Fatal(err)
	}
	taken := make(chan time.Time) // when the worker got a task
	go func() {
		for ctx.Err() == nil {
			task, err := p.client.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("bench")})
			if err != nil || task.TaskToken == nil {
				continue
			}
			at := time.Now()
			if _, err := p.client.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{}`)}); err != nil {
				b.Error(err)
			}
			select {
			case taken <- at:
			case <-ctx.Done():
			}
		}
	}()
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		in, _ := json.Marshal(map[string]int{"i": i})
		if _, err := p.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String(fmt.Sprintf("b-%d", i)), Input: aws.String(string(in))}); err != nil {
			b.Fatal(err)
		}
		started := time.Now()
		latencies = append(latencies, (<-taken).Sub(started))
	}
	b.StopTimer()
	slices.Sort(latencies)
	ms := func(q float64) float64 {
		return float64(latencies[int(q*float64(len(latencies)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
