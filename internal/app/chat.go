package app

import (
	"os"
	"path/filepath"

	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/confirm"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/httpapi/chatapi"
	"github.com/veredicto/veredicto/internal/intake"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// localChat assembles the chat functions on this machine under dir, with
// the layout "veredicto serve --data dir" uses (turns under dir/chats,
// mail under dir/outbox, confirmations and events under dir): for
// "veredicto lambda invoke", where ChatFunction runs the turn in the
// request (no queue) and the supervisor is offline unless
// OPENAI_API_KEY is set.
func localChat(dir string, searches *intake.Service, confirms *confirm.Service, judge flags.ContradictionJudge) (*chatapi.Routes, *chat.Service) {
	reg, err := chat.LoadRegistry(prompts.AgentsFile, prompts.AgentsYAML, chat.KnownActions())
	if err != nil || searches == nil || confirms == nil || judge == nil {
		return nil, nil // the embedded registry is tested; without it the handler reports the missing service
	}
	var model chat.Model
	if key := os.Getenv("OPENAI_API_KEY"); key != "" {
		if m, err := chat.NewOpenAIModel(key, os.Getenv("OPENAI_BASE_URL"), cmpOr(os.Getenv("OPENAI_MODEL"), "gpt-4o-mini")); err == nil {
			model = m
		}
	}
	in, reportsDir, _ := LocalLayout(dir)
	intents, err := intentModels(reg, fileblob.NewDir(reportsDir), os.Getenv, nil)
	if err != nil {
		return nil, nil
	}
	svc := &chat.Service{
		Registry: reg, Intents: intents, Model: model, Store: filestore.NewLocal(ChatDir(dir)), Events: confirms.Events,
		Confirmations: confirms, ConfirmationStore: confirms.Store, Options: chat.OptionsFromEnv(os.Getenv),
		Audit: &audit.Folders{Root: filepath.Join(reportsDir, AuditPrefix)},
		Tools: map[string]chat.Tool{
			chat.ActionSearch: chat.SearchTool{Searches: searches},
			chat.ActionFlags:  chat.FlagsTool{Inputs: fileblob.NewDir(in), Judge: judge},
			// The companion's and the debate's machines run under "serve"
			// (cmd/veredicto wires them); a lone invoke has none.
			chat.ActionCompanion: chat.CompanionTool(nil, ""),
			chat.ActionDebate:    chat.DebateTool(nil, ""),
			chat.ActionReports:   chat.ReportsTool{Searches: searches, Outbox: chat.DirOutbox{Dir: filepath.Join(dir, "outbox")}},
		},
	}
	if svc.Validate() != nil {
		return nil, nil
	}
	return &chatapi.Routes{Service: svc}, svc
}

// localChatLinks is ChatLinkFunction's service on this machine, for
// "veredicto lambda invoke": the links serve keeps with the chats under
// dir/chats, the conversations' streams under dir/events. (serve follows
// its links itself.)
func localChatLinks(dir string) *chat.Links {
	events := fileeventlog.Local(dir)
	return &chat.Links{Store: filestore.NewLocal(ChatDir(dir)), Events: events, Log: events}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
