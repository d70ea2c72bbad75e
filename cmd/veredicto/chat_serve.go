package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/app"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/control"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// CompanionMachine is the template logical id of the career companion's
// state machine (seed 001), which the chat's companion agent starts; the
// debate agent starts DebateMachine.
const CompanionMachine = "CareerCompanionStateMachine"

// chatConfig is the chat's part of serveConfig, set by the wiring (tests
// put a scripted model here); zero values read the environment.
type chatConfig struct {
	model   chat.Model
	options *chat.Options
}

// assembleChat builds the delegation chat on the local services: the
// registry (prompts/agents.yaml, or $CHAT_AGENTS_FILE), the supervisor
// (OpenAI-compatible when OPENAI_API_KEY is set, offline otherwise), the
// tools on the project's workflows, turns under DATA/chats and outgoing
// mail under DATA/outbox.
func assembleChat(cfg serveConfig, a *app.App, sfnClient *sfn.Client, events *fileeventlog.Log, confirmations *confirm.Service, logger *slog.Logger) (*chat.Handler, string, error) {
	file, data := prompts.AgentsFile, prompts.AgentsYAML
	if p := os.Getenv("CHAT_AGENTS_FILE"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, "", fmt.Errorf("CHAT_AGENTS_FILE: %w", err)
		}
		file, data = p, b
	}
	reg, err := chat.LoadRegistry(file, data, chat.KnownActions())
	if err != nil {
		return nil, "", err
	}
	model, notice := cfg.chat.model, "chat: scripted model"
	if model == nil {
		notice = "chat: offline supervisor (delegates at intent ≥ 0.55)"
		if key := os.Getenv("OPENAI_API_KEY"); key != "" {
			name := os.Getenv("OPENAI_MODEL")
			if name == "" {
				name = "gpt-4o-mini"
			}
			m, err := chat.NewOpenAIModel(key, os.Getenv("OPENAI_BASE_URL"), name)
			if err != nil {
				return nil, "", err
			}
			model, notice = m, "chat: openai-compatible supervisor, model "+name
		}
	}
	opts := chat.OptionsFromEnv(os.Getenv)
	if cfg.chat.options != nil {
		opts = *cfg.chat.options
	}
	inputs, _, _ := app.LocalLayout(cfg.data)
	svc := &chat.Service{
		Registry: reg, Model: model, Store: filestore.NewLocal(filepath.Join(cfg.data, "chats")), Events: events,
		Confirmations: confirmations, ConfirmationStore: confirmations.Store, Options: opts, Logger: logger,
		Tools: map[string]chat.Tool{
			chat.ActionSearch:    chat.SearchTool{Searches: a.Intake},
			chat.ActionFlags:     chat.FlagsTool{Inputs: fileblob.NewDir(inputs), Judge: a.HTTP.Judge},
			chat.ActionCompanion: chat.MachineTool{Client: sfnClient, MachineARN: control.StateMachineARN(CompanionMachine), Name: CompanionMachine, NewArgs: func() any { return &chat.CompanionArgs{} }, Input: chat.CompanionInput},
			chat.ActionDebate:    chat.MachineTool{Client: sfnClient, MachineARN: control.StateMachineARN(DebateMachine), Name: DebateMachine, NewArgs: func() any { return &chat.DebateArgs{} }, Input: chat.DebateInput, Execution: chat.DebateExecution},
			chat.ActionReports:   chat.ReportsTool{Searches: a.Intake, Outbox: chat.DirOutbox{Dir: filepath.Join(cfg.data, "outbox")}},
		},
	}
	if err := svc.Validate(); err != nil {
		return nil, "", err
	}
	return &chat.Handler{Service: svc, Async: true, Logger: logger}, notice, nil
}
