package app

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/quarantine"
	"github.com/veredicto/veredicto/internal/queue"
)

// LocalInputsBucket is the bucket the local S3 notifications name, the
// stand-in for template.yaml's inputs bucket (a Distributed Map reads it
// by this name too: control.LocalBuckets).
const LocalInputsBucket = control.LocalInputsBucket

// watchInterval is how often serve looks for new READY markers.
const watchInterval = time.Second

// inputsQueueFolder is where the local stand-in for template.yaml's
// InputsQueue lives in the data folder.
const inputsQueueFolder = "queue/inputs"

// InputsQueueDir is where the local stand-in for template.yaml's
// InputsQueue lives under the data folder.
func InputsQueueDir(data string) string {
	return filepath.Join(data, filepath.FromSlash(inputsQueueFolder))
}

// InputsQuarantine is where the inputs queue's damaged files go:
// DATA/quarantine/queue/inputs.
func InputsQuarantine(data string, logger *slog.Logger) *quarantine.Box {
	return quarantine.New(data, inputsQueueFolder, logger)
}

// OpenInputs opens the inputs queue under data, as serve and "veredicto
// queue" share it.
func OpenInputs(data string, cfg queue.Config, logger *slog.Logger) (*queue.Dir, error) {
	if cfg.Quarantine == nil {
		cfg.Quarantine = InputsQuarantine(data, logger)
	}
	return queue.Open(InputsQueueDir(data), cfg)
}

// InputsQueue is serve's upload path, as on AWS: READY markers written to
// the local inputs bucket are notified to a durable queue whose consumer
// calls TriggerFunction's handler with SQS batches.
type InputsQueue struct {
	Queue    *queue.Dir
	Watcher  *queue.Watcher
	Consumer *queue.Consumer
}

// OpenInputsQueue opens the inputs queue under data, consumed by handle.
func OpenInputsQueue(data string, cfg queue.Config, handle queue.Handler, logger *slog.Logger) (*InputsQueue, error) {
	q, err := OpenInputs(data, cfg, logger)
	if err != nil {
		return nil, err
	}
	inputs, _, _ := LocalLayout(data)
	return &InputsQueue{
		Queue:    q,
		Watcher:  &queue.Watcher{Inputs: inputs, Bucket: LocalInputsBucket, Queue: q, Logger: logger},
		Consumer: &queue.Consumer{Queue: q, Handle: handle, BatchSize: 10, Logger: logger, Idle: min(time.Second, cfg.Visibility)},
	}, nil
}

// Run watches and consumes until ctx is done; the channel closes when both
// have stopped.
func (iq *InputsQueue) Run(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := make(chan struct{})
		go func() { defer close(w); iq.Watcher.Run(ctx, watchInterval) }()
		iq.Consumer.Run(ctx)
		<-w
	}()
	return done
}
