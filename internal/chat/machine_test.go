package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

type fakeStarter struct {
	in  []*sfn.StartExecutionInput
	err error
}

func (f *fakeStarter) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.in = append(f.in, in)
	if f.err != nil {
		return nil, f.err
	}
	return &sfn.StartExecutionOutput{ExecutionArn: aws.String("arn:x:" + aws.ToString(in.Name))}, nil
}

// TestMachineInputs: the companion and the debate are started with the
// inputs their machines document, under a deterministic execution name.
func TestMachineInputs(t *testing.T) {
	agent := &Agent{ID: "debate", Tool: "delegate_to_debate"}
	tests := []struct {
		name  string
		tool  MachineTool
		args  any
		want  []string // substrings of the input JSON
		error string
	}{
		{"companion", MachineTool{Name: "CareerCompanionStateMachine", Input: CompanionInput},
			&CompanionArgs{ApplicationID: "app-1", Mode: "full", Company: "Andina"},
			[]string{`"tenant":"acme"`, `"application_id":"app-1"`, `"mode":"full"`, `"company":"Andina"`, `"refresh":false`}, ""},
		{"companion without application", MachineTool{Name: "CareerCompanionStateMachine", Input: CompanionInput},
			&CompanionArgs{Mode: "screening"}, nil, "crea la postulación"},
		{"debate on a candidate", MachineTool{Name: "DebateStateMachine", Input: DebateInput},
			&DebateArgs{Question: "¿Avanzamos?", SearchID: "s-1", CandidateID: "c-5"},
			[]string{`"debate_id":"chat-c1-3-debate-`, `"options":["avanzar","no avanzar"]`, `"mode":"auto"`, `"id":"cfo"`,
				`"knowledge":["searches/acme/s-1/","reports/acme/s-1/c-5/"]`}, ""},
		{"debate without question", MachineTool{Name: "DebateStateMachine", Input: DebateInput}, &DebateArgs{}, nil, "falta la pregunta"},
		{"default input", MachineTool{Name: "X"}, &DebateArgs{Question: "q"}, []string{`"chat_id":"c1"`, `"source":"chat"`, `"question":"q"`}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeStarter{}
			tc.tool.Client, tc.tool.MachineARN = st, "arn:sm"
			var steps int
			res, err := tc.tool.Run(context.Background(), Call{Tenant: "acme", ChatID: "c1", Turn: 3, Agent: agent, Args: tc.args,
				Step: func(string, string, map[string]any) { steps++ }})
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) || len(st.in) != 0 {
					t.Fatalf("err = %v, starts %d; want %q and no start", err, len(st.in), tc.error)
				}
				return
			}
			if err != nil || len(st.in) != 1 || steps != 1 {
				t.Fatalf("Run = %+v, %v; starts %d, steps %d", res, err, len(st.in), steps)
			}
			in := aws.ToString(st.in[0].Input)
			if !json.Valid([]byte(in)) {
				t.Fatalf("input is not JSON: %s", in)
			}
			for _, w := range tc.want {
				if !strings.Contains(in, w) {
					t.Errorf("input %s lacks %s", in, w)
				}
			}
			if name := aws.ToString(st.in[0].Name); name != ExecutionName("acme", "c1", 3, "debate") || !strings.HasPrefix(name, "chat-c1-3-debate-") {
				t.Errorf("execution name %q", name)
			}
		})
	}
	st := &fakeStarter{err: &sfntypes.StateMachineDoesNotExist{Message: aws.String("gone")}}
	_, err := MachineTool{Client: st, MachineARN: "arn:sm", Name: "DebateStateMachine", Input: DebateInput}.Run(context.Background(),
		Call{Tenant: "acme", ChatID: "c1", Turn: 1, Agent: agent, Args: &DebateArgs{Question: "q"}, Step: func(string, string, map[string]any) {}})
	if te, ok := err.(*ToolError); !ok || !strings.Contains(te.Message, "no está registrado") {
		t.Errorf("missing machine: %v", err)
	}
}

func TestExecutionNameBounded(t *testing.T) {
	long := strings.Repeat("x", 64)
	for _, n := range []string{ExecutionName("acme", "c1", 1, "debate"), ExecutionName(long, long, 999, "search-analyst"), ExecutionName("a.b", "c", 1, "d")} {
		if len(n) > 80 || unsafeName.MatchString(n) {
			t.Errorf("execution name %q: %d characters or unsafe", n, len(n))
		}
	}
	if ExecutionName("a", "b-1", 1, "x") == ExecutionName("a-b", "1", 1, "x") || ExecutionName("acme", "c", 1, "x") == ExecutionName("zeta", "c", 1, "x") {
		t.Error("two chats share an execution name")
	}
}

// TestIDsFollowTheOneRule: the tools take every id the HTTP API takes,
// accents and ñ included (veredicto.ValidID), and refuse what it refuses.
func TestIDsFollowTheOneRule(t *testing.T) {
	tool := SearchTool{Searches: &fakeSearches{tenant: "acme"}}
	for _, tc := range []struct {
		id string
		ok bool
	}{{"búsqueda-ñ", true}, {"cfo-2026", true}, {"c.001", true}, {"../x", false}, {"a/b", false}, {"", false}} {
		_, err := tool.Run(context.Background(), Call{Tenant: "acme", Args: &SearchArgs{Operation: "status", SearchID: tc.id},
			Step: func(string, string, map[string]any) {}})
		var te *ToolError
		refused := errors.As(err, &te) && strings.Contains(te.Error(), "no es un id de búsqueda válido")
		if refused == tc.ok {
			t.Errorf("search id %q: %v, want accepted %v", tc.id, err, tc.ok)
		}
	}
}
