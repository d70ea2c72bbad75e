package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app/chatapp"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/auth"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/control"
	storefile "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// localChatService builds the delegation chat on the local services: the
// registry (prompts/agents.yaml, or $CHAT_AGENTS_FILE), the supervisor
// (OpenAI-compatible when OPENAI_API_KEY is set, offline otherwise), the
// tools on the project's workflows, turns under DATA/chats and outgoing
// mail under DATA/outbox. The notice says which supervisor runs.
func (s *Server) localChatService(a *App, events *fileeventlog.Log) (*chat.Service, string, error) {
	cfg := s.cfg
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
	model, notice := cfg.ChatModel, "chat: scripted model"
	if model == nil {
		notice = "chat: offline supervisor (delegates at intent ≥ 0.55)"
		if key := os.Getenv("OPENAI_API_KEY"); key != "" {
			name := cmpOr(os.Getenv("OPENAI_MODEL"), "gpt-4o-mini")
			m, err := chat.NewOpenAIModel(key, os.Getenv("OPENAI_BASE_URL"), name)
			if err != nil {
				return nil, "", err
			}
			model, notice = m, "chat: openai-compatible supervisor, model "+name
		}
	}
	opts := chat.OptionsFromEnv(os.Getenv)
	if cfg.ChatOptions != nil {
		opts = *cfg.ChatOptions
	}
	inputs, reports, _ := LocalLayout(cfg.Data)
	intents, err := intentModels(reg, fileblob.NewDir(reports), os.Getenv, s.logger)
	if err != nil {
		return nil, "", err
	}
	if intents.Default != nil {
		notice += "; intent model " + intents.Default.Version
	}
	// The chat's agents start workflows as "chat", scoped to the
	// conversation's tenant.
	starter := chatStarter{s.sfnClient(auth.KeySpec{Name: PrincipalChat, Service: true})}
	store := storefile.NewLocal(ChatDir(cfg.Data))
	// The workflows a conversation starts report back to it; the links
	// are kept with the chats, so a restart resumes them (Server.Start).
	links := &chat.Links{Store: store, Events: events, Log: events, Watch: events, Executions: chatExecutions{s.Manager}, Logger: s.logger}
	svc := &chat.Service{
		Registry: reg, Intents: intents, Model: model, Store: store, Events: events, Links: links,
		Confirmations: s.Confirmations, ConfirmationStore: s.Confirmations.Store, Options: opts, Logger: s.logger,
		Audit: &audit.Folders{Root: filepath.Join(reports, AuditPrefix)},
		Tools: map[string]chat.Tool{
			chat.ActionSearch:    chat.SearchTool{Searches: a.Intake},
			chat.ActionFlags:     chat.FlagsTool{Inputs: fileblob.NewDir(inputs), Judge: a.Judge},
			chat.ActionCompanion: chat.CompanionTool(starter, control.StateMachineARN(CareerCompanionMachine)),
			chat.ActionDebate:    chat.DebateTool(starter, control.StateMachineARN(DebateMachine)),
			chat.ActionReports:   chat.ReportsTool{Searches: a.Intake, Outbox: chat.DirOutbox{Dir: filepath.Join(cfg.Data, "outbox")}},
		},
	}
	if svc.Corpus, err = EmbeddedCorpus(); err != nil {
		return nil, "", err
	}
	if err := svc.Validate(); err != nil {
		return nil, "", err
	}
	return svc, notice, nil
}

// EmbeddedCorpus is the delegation corpus built into the binary
// (chatapp.EmbeddedCorpus).
func EmbeddedCorpus() (chat.Corpus, error) { return chatapp.EmbeddedCorpus() }

// LocalRecalibration assembles what "veredicto chat recalibrate" needs on
// the data folder "veredicto serve --data" uses: the registry
// ($CHAT_AGENTS_FILE or the embedded one), the tenants' turns and answers
// under DATA/chats, their models under DATA/reports/chat/models/, the
// installation's $CHAT_INTENT_MODEL, the event log under DATA/events and
// the embedded corpus. Nothing of the server needs to run.
func LocalRecalibration(data string, getenv func(string) string, logger *slog.Logger) (*chat.Service, error) {
	file, body := prompts.AgentsFile, prompts.AgentsYAML
	if p := getenv("CHAT_AGENTS_FILE"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("CHAT_AGENTS_FILE: %w", err)
		}
		file, body = p, b
	}
	reg, err := chat.LoadScoringRegistry(file, body)
	if err != nil {
		return nil, err
	}
	_, reports, _ := LocalLayout(data)
	intents, err := intentModels(reg, fileblob.NewDir(reports), getenv, logger)
	if err != nil {
		return nil, err
	}
	svc := &chat.Service{Registry: reg, Intents: intents, Store: storefile.NewLocal(ChatDir(data)),
		Events: fileeventlog.Local(data), Logger: logger}
	if svc.Corpus, err = EmbeddedCorpus(); err != nil {
		return nil, err
	}
	return svc, nil
}

// recalibrationCheck is how often serve looks for tenants due for their
// weekly recalibration (chat.Service.RecalibrateDue).
const recalibrationCheck = time.Hour

// recalibrate is serve's weekly job: a minute after the start, then every
// recalibrationCheck, every tenant that has answered and was last
// recalibrated over chat.RecalibrateEvery ago is refitted; the decisions
// go to the metrics and the tenant's event stream. It ends with ctx.
func recalibrate(ctx context.Context, svc *chat.Service, logger *slog.Logger) {
	wait := time.Minute
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = recalibrationCheck
		recs, err := svc.RecalibrateDue(ctx, chat.RecalibrateEvery)
		if err != nil {
			logger.Warn("weekly recalibration", "error", err)
			continue
		}
		if len(recs) > 0 {
			logger.Info("weekly recalibration", "tenants", len(recs))
		}
	}
}

// intentModels chooses each tenant's delegation-intent scorer: its model
// under chat/models/<tenant>/ in blobs (veredicto chat recalibrate), else
// the installation's $CHAT_INTENT_MODEL file (veredicto chat learn), else
// the registry's keyword heuristic. A CHAT_INTENT_MODEL that cannot be read
// or was fitted for another registry stops the start, named.
func intentModels(reg *chat.Registry, blobs chat.ModelBlobs, getenv func(string) string, logger *slog.Logger) (*chat.IntentModels, error) {
	m := &chat.IntentModels{Registry: reg, Blobs: blobs, Logger: logger}
	if p := getenv("CHAT_INTENT_MODEL"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("CHAT_INTENT_MODEL: %w", err)
		}
		if m.Default, err = reg.LoadIntentModel(p, b); err != nil {
			return nil, fmt.Errorf("CHAT_INTENT_MODEL: %w", err)
		}
	}
	return m, nil
}

// chatStarter starts the chat's workflows signed with the chat's key for
// the tenant the execution input names (the conversation's: the chat
// builds it), which the server checks against the key.
type chatStarter struct{ client *sfn.Client }

func (c chatStarter) StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	var input struct {
		Tenant string `json:"tenant"`
	}
	if in.Input != nil {
		_ = json.Unmarshal([]byte(*in.Input), &input)
	}
	return c.client.StartExecution(auth.ActingFor(ctx, input.Tenant), in, opts...)
}

var _ chat.Starter = chatStarter{}

// chatExecutions finds and describes, for a conversation's tenant, the
// executions its workflows run as (chat.Executions): another tenant's is
// not found.
type chatExecutions struct{ m *control.Manager }

func (x chatExecutions) ResolveExecution(ctx context.Context, tenant, ref string) (string, error) {
	return executions(x).ResolveExecution(ctx, tenant, ref)
}

func (x chatExecutions) Describe(ctx context.Context, tenant, arn string) (chat.ExecutionState, error) {
	e, err := x.m.DescribeExecution(ctx, arn)
	if err != nil || e.Tenant != tenant {
		return chat.ExecutionState{}, &veredicto.NotFoundError{What: "execution " + arn}
	}
	return chat.ExecutionState{Status: e.Status, Output: e.Output}, nil
}

var _ chat.Executions = chatExecutions{}
