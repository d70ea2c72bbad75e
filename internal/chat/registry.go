package chat

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/yamldoc"
)

// ToolPrefix starts every delegation tool's name (seed §7).
const ToolPrefix = "delegate_to_"

// Agent is one entry of the registry.
type Agent struct {
	// ID is the agent's id ("search-analyst"); its tool is ToolPrefix+ID.
	ID string `yaml:"id"`
	// Name is how people call the agent; Aliases are other explicit names
	// ("analista", "analyst"). Naming one raises the score (see Score).
	Name    string   `yaml:"name"`
	Aliases []string `yaml:"aliases"`
	// Description says what the agent is for; the model reads it in the
	// tool's description.
	Description string `yaml:"description"`
	// Tool must be ToolPrefix+ID (empty for the supervisor).
	Tool string `yaml:"tool"`
	// Action names the implementation that runs when the tool is called;
	// it must be one the runtime knows (LoadRegistry's known set).
	Action string `yaml:"action"`
	// Does tells the model what the tool does (seed §13: "keywords + tool").
	Does string `yaml:"does"`
	// Critical marks a delegation worth one retry when it fails (seed §11).
	Critical bool `yaml:"critical"`
	// Keywords are the weighted terms of the heuristic.
	Keywords []Keyword `yaml:"keywords"`
}

// Keyword is one weighted term: a word or phrase, matched on word
// boundaries after case and accent folding; a trailing "*" matches any
// word that starts with the term's last word ("compar*": compara, compare,
// comparison).
type Keyword struct {
	Term   string  `yaml:"term"`
	Weight float64 `yaml:"weight"`
}

// Registry is a validated agents registry.
type Registry struct {
	// Supervisor is the id of the agent that converses (it has no tool).
	Supervisor string  `yaml:"supervisor"`
	Agents     []Agent `yaml:"agents"`

	file     string
	byTool   map[string]*Agent
	matchers [][]matcher // per agent, in Agents order
	names    [][]matcher // explicit names per agent
}

// Bounds of a registry.
const (
	MaxAgents   = 64
	MaxKeywords = 200
	MaxWeight   = 5
)

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,46}$`)

// LoadRegistry decodes and validates a registry. known lists the actions
// the runtime implements: an agent whose action is not among them, a
// duplicated id, a tool that is not delegate_to_<id>, or a keyword without
// a term or with a weight outside (0, 5] is rejected with the file and the
// field.
func LoadRegistry(file string, data []byte, known map[string]bool) (*Registry, error) {
	var r Registry
	if err := yamldoc.Decode(file, data, &r); err != nil {
		return nil, err
	}
	bad := func(field, problem string) error {
		return &veredicto.InvalidInputError{File: file, Field: field, Problem: problem}
	}
	if len(r.Agents) == 0 {
		return nil, bad("agents", "is empty: list at least the supervisor and one specialist")
	}
	if len(r.Agents) > MaxAgents {
		return nil, bad("agents", fmt.Sprintf("has %d agents, over %d", len(r.Agents), MaxAgents))
	}
	r.file = file
	r.byTool = map[string]*Agent{}
	seen := map[string]int{}
	supervisor := -1
	for i := range r.Agents {
		a := &r.Agents[i]
		at := func(f string) string { return fmt.Sprintf("agents[%d].%s", i, f) }
		if !idPattern.MatchString(a.ID) {
			return nil, bad(at("id"), "must be 1-47 lowercase letters, digits or '-', starting with a letter or digit")
		}
		if j, dup := seen[a.ID]; dup {
			return nil, bad(at("id"), fmt.Sprintf("duplicates agents[%d].id %q", j, a.ID))
		}
		seen[a.ID] = i
		if strings.TrimSpace(a.Description) == "" {
			return nil, bad(at("description"), "is required")
		}
		if a.ID == r.Supervisor {
			supervisor = i
			if a.Tool != "" || a.Action != "" {
				return nil, bad(at("tool"), "must be empty: the supervisor is not delegated to")
			}
			continue
		}
		if a.Tool != ToolPrefix+a.ID {
			return nil, bad(at("tool"), fmt.Sprintf("must be %q (the tool is named after the agent)", ToolPrefix+a.ID))
		}
		if !known[a.Action] {
			return nil, bad(at("action"), fmt.Sprintf("names the tool implementation %q, which does not exist (known: %s)", a.Action, strings.Join(sortedKeys(known), ", ")))
		}
		if strings.TrimSpace(a.Does) == "" {
			return nil, bad(at("does"), "is required: what the tool does, for the model")
		}
		if len(a.Keywords) == 0 {
			return nil, bad(at("keywords"), "is empty: the heuristic needs at least one keyword")
		}
		if len(a.Keywords) > MaxKeywords {
			return nil, bad(at("keywords"), fmt.Sprintf("has %d keywords, over %d", len(a.Keywords), MaxKeywords))
		}
		for k, kw := range a.Keywords {
			if len(words(fold(strings.TrimSuffix(kw.Term, "*")))) == 0 {
				return nil, bad(fmt.Sprintf("agents[%d].keywords[%d].term", i, k), "has no word")
			}
			if kw.Weight <= 0 || kw.Weight > MaxWeight {
				return nil, bad(fmt.Sprintf("agents[%d].keywords[%d].weight", i, k), fmt.Sprintf("must be above 0 and at most %d", MaxWeight))
			}
		}
		r.byTool[a.Tool] = a
	}
	if r.Supervisor == "" {
		return nil, bad("supervisor", "is required: the id of the agent that converses")
	}
	if supervisor < 0 {
		return nil, bad("supervisor", fmt.Sprintf("names %q, which is not among agents", r.Supervisor))
	}
	if len(r.byTool) == 0 {
		return nil, bad("agents", "has no specialist besides the supervisor")
	}
	r.compile()
	return &r, nil
}

// File is the registry's file name.
func (r *Registry) File() string { return r.file }

// ByTool returns the agent a delegation tool reaches.
func (r *Registry) ByTool(tool string) (*Agent, bool) {
	a, ok := r.byTool[tool]
	return a, ok
}

// Agent returns the agent with id.
func (r *Registry) Agent(id string) (*Agent, bool) {
	for i := range r.Agents {
		if r.Agents[i].ID == id {
			return &r.Agents[i], true
		}
	}
	return nil, false
}

// Specialists are every agent but the supervisor, in registry order.
func (r *Registry) Specialists() []*Agent {
	out := make([]*Agent, 0, len(r.Agents))
	for i := range r.Agents {
		if r.Agents[i].ID != r.Supervisor {
			out = append(out, &r.Agents[i])
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Actions the runtime implements (Agent.Action).
const (
	ActionSearch    = "search"
	ActionFlags     = "flags"
	ActionCompanion = "companion"
	ActionDebate    = "debate"
	ActionReports   = "reports"
)

// KnownActions is the set of actions this package implements.
func KnownActions() map[string]bool {
	return map[string]bool{ActionSearch: true, ActionFlags: true, ActionCompanion: true, ActionDebate: true, ActionReports: true}
}

// LoadScoringRegistry loads a registry only to score requests with it
// (veredicto chat evaluate, learn): every agent's action is accepted, since
// none runs. Everything else is checked as LoadRegistry does.
func LoadScoringRegistry(file string, data []byte) (*Registry, error) {
	var peek struct {
		Agents []struct {
			Action string `yaml:"action"`
		} `yaml:"agents"`
	}
	known := map[string]bool{}
	if err := yaml.Unmarshal(data, &peek); err == nil {
		for _, a := range peek.Agents {
			if a.Action != "" {
				known[a.Action] = true
			}
		}
	}
	return LoadRegistry(file, data, known)
}
