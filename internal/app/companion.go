package app

import (
	"fmt"
	"path/filepath"

	"github.com/veredicto/veredicto/internal/app/companionapp"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/llm"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// LocalCompanion is the career companion's service on this machine under
// dir: context records in the local context store, inputs and reports in
// the local reports folder (companion/<tenant>/<id>/), each execution's
// audit record under reports/audit/<tenant>/<execution>/.
func LocalCompanion(dir string, client *llm.OpenAI, events companion.Appender) *companion.Service {
	_, rep, ctxDir := LocalLayout(dir)
	return &companion.Service{Store: filestore.NewLocal(ctxDir), Blobs: fileblob.NewDir(rep), Events: events,
		Analyst: companionapp.Analyst(client, nil), Engine: companion.NewEngine(companion.DefaultConfig()),
		Audit: &audit.Folders{Root: filepath.Join(rep, AuditPrefix)}}
}

// ChooseCompanionAnalyst picks the career companion's analyst like
// ChooseLLM: the LLM agents, with the intent check on smallModel
// (default $OPENAI_SMALL_MODEL, else the main model), or the offline
// baseline. The notice is the one line shown to the user.
func ChooseCompanionAnalyst(provider, model, smallModel string, getenv func(string) string) (companion.Analyst, string, error) {
	client, err := ChooseLLM(provider, model, getenv)
	if err != nil {
		return nil, "", err
	}
	if client == nil {
		return companion.Offline{}, "LLM: offline baseline (deterministic; the report is labelled as a baseline, not a model judgment)", nil
	}
	if smallModel == "" {
		smallModel = getenv("OPENAI_SMALL_MODEL")
	}
	small := client
	if smallModel != "" && smallModel != client.Info().Model {
		if small, err = ChooseLLM("openai", smallModel, getenv); err != nil {
			return nil, "", err
		}
	}
	return companionapp.Analyst(client, small), fmt.Sprintf("LLM: openai-compatible, model %s (intent: %s)", client.Info().Model, small.Info().Model), nil
}
