package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/veredicto/veredicto/internal/app/debateapp"
	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/httpapi/debateapi"
	"github.com/veredicto/veredicto/internal/llm"
	localstarter "github.com/veredicto/veredicto/internal/starter/local"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// localDebate assembles the debate's steps and routes on this machine
// under dir: knowledge from dir/inputs (reports from dir/reports), the
// debate's files to dir/reports, logs in dir/context. st starts
// DebateStateMachine; without one POST /debates runs it in-process
// through the engine (execution records in kv), with the human decision
// recorded by decisions; each execution keeps its audit record in
// records.
func localDebate(dir string, client *llm.OpenAI, kv localstarter.KV, decisions *confirm.Service, st debateapi.Starter, records debate.Auditor, logger *slog.Logger) (*debate.Steps, *debateapi.Routes) {
	in, rep, ctxDir := LocalLayout(dir)
	inputs, reports, logs := fileblob.NewDir(in), fileblob.NewDir(rep), filestore.NewLocal(ctxDir)
	// Each execution's audit record: DATA/reports/audit/<tenant>/<execution>/.
	steps := debateapp.Recorded(debateapp.Steps(client, debateapp.Knowledge{Inputs: inputs, Reports: reports}, reports, logs, logger), records)
	if st != nil {
		return steps, &debateapi.Routes{Starter: st, Logs: logs, Reports: reports}
	}
	eng := asl.New(catalog.DebateRegistry(steps, decisions))
	local := localstarter.New(kv, func(ctx context.Context, name string, input []byte) (*asl.Result, error) {
		var in debate.StartInput
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, fmt.Errorf("execution input: %w", err)
		}
		x, err := catalog.StartDebate(ctx, eng, in, nil)
		if err != nil {
			return nil, err
		}
		return x.Wait(ctx)
	})
	return steps, &debateapi.Routes{Starter: local, Logs: logs, Reports: reports}
}
