package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/doctor"
	"github.com/veredicto/veredicto/internal/llm"
)

// ProviderProbeTimeout bounds doctor's look at the provider's address: a
// wrong OPENAI_BASE_URL is named within it.
const ProviderProbeTimeout = 4 * time.Second

// ProviderCallTimeout bounds doctor's one tiny structured call.
const ProviderCallTimeout = 30 * time.Second

// DoctorProviderChecks are doctor's checks of what runs beside the data
// folder: the LLM provider the environment configures (OPENAI_API_KEY,
// OPENAI_BASE_URL, OPENAI_MODEL, OPENAI_TIMEOUT) — reachable, the model
// listed, one tiny structured call unless call is false — and the server
// running on data. Offline (no key) nothing is reached, and they say so.
func DoctorProviderChecks(getenv func(string) string, data string, call bool) []doctor.Check {
	p := &providerProbe{getenv: getenv}
	return []doctor.Check{
		{Name: "llm-provider", Run: p.reach},
		{Name: "llm-call", Run: func(ctx context.Context) (string, []doctor.Finding, error) { return p.call(ctx, call) }},
		{Name: "server", Run: func(ctx context.Context) (string, []doctor.Finding, error) { return checkServer(ctx, data) }},
	}
}

type providerProbe struct {
	getenv  func(string) string
	client  *llm.OpenAI
	offline bool
	failed  bool // the provider check found a problem: no call is tried
}

func (p *providerProbe) reach(ctx context.Context) (string, []doctor.Finding, error) {
	client, err := ChooseLLM("", "", p.getenv)
	if err != nil {
		p.failed = true
		return "misconfigured", []doctor.Finding{{What: "the LLM configuration", Where: "environment", Why: err.Error()}}, nil
	}
	if client == nil {
		p.offline = true
		return "offline: OPENAI_API_KEY is not set, so the offline lexical baseline answers (reports say so) and no provider is reached", nil, nil
	}
	p.client = client
	base, model := client.BaseURL(), client.Info().Model
	fail := func(why string) (string, []doctor.Finding, error) {
		p.failed = true
		return "not usable", []doctor.Finding{{What: "the LLM provider", Where: base, Why: why}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ProviderProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return fail(fmt.Sprintf("OPENAI_BASE_URL is not a URL (%v)", err))
	}
	req.Header.Set("Authorization", "Bearer "+p.getenv("OPENAI_API_KEY"))
	resp, err := http.DefaultClient.Do(req)
	switch {
	case err != nil && llm.Unreachable(err):
		return fail((&llm.UnreachableError{URL: base, Err: err}).Error())
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)):
		return fail(fmt.Sprintf("no answer within %s: check OPENAI_BASE_URL (a host that accepts nothing) and the network", ProviderProbeTimeout))
	case err != nil:
		return fail(fmt.Sprintf("the request failed (%v): check OPENAI_BASE_URL", err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fail(fmt.Sprintf("it refused the key (HTTP %d): check OPENAI_API_KEY", resp.StatusCode))
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Sprintf("%s answers; it lists no models at /models (not every compatible server does), so %s is tried by the call", base, model), nil, nil
	case resp.StatusCode != http.StatusOK:
		return fail(fmt.Sprintf("GET /models answered HTTP %d: check OPENAI_BASE_URL (it ends in /v1 for most providers)", resp.StatusCode))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 8<<20)).Decode(&list); err != nil {
		return fail(fmt.Sprintf("GET /models did not answer an OpenAI model list (%v): check OPENAI_BASE_URL", err))
	}
	var ids []string
	for _, m := range list.Data {
		if m.ID == model {
			return fmt.Sprintf("%s answers and lists model %s", base, model), nil, nil
		}
		ids = append(ids, m.ID)
	}
	sort.Strings(ids)
	if len(ids) > 8 {
		ids = append(ids[:8], "…")
	}
	return fail(fmt.Sprintf("model %s is not among the %d it lists (%s): set OPENAI_MODEL to one of them", model, len(list.Data), strings.Join(ids, ", ")))
}

// callSchema is the tiny call's answer: {"ok": true}.
var callSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false}`)

func (p *providerProbe) call(ctx context.Context, call bool) (string, []doctor.Finding, error) {
	switch {
	case p.offline:
		return "not made: offline, there is no provider to call", nil, nil
	case p.failed || p.client == nil:
		return "not made: the provider check failed (above)", nil, nil
	case !call:
		return "not made (--no-call): the provider is reachable, structured output is untested", nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ProviderCallTimeout)
	defer cancel()
	start := time.Now()
	resp, err := p.client.Complete(ctx, llm.Request{Schema: "doctor", JSONSchema: callSchema, MaxOutputTokens: 16,
		System: "Responde solo con JSON.", User: `Responde {"ok": true}.`})
	where := p.client.BaseURL()
	if err != nil {
		why := err.Error()
		// The provider's own words: this call carries no personal data.
		if se := (*llm.StatusError)(nil); errors.As(err, &se) && se.Message != "" {
			why += ": " + se.Message
		}
		switch statusOf(err) {
		case http.StatusBadRequest, http.StatusUnprocessableEntity:
			why += ": the provider refused a strict structured-output request (response_format json_schema); use a model that supports it (OPENAI_MODEL)"
		case http.StatusNotFound:
			why += ": no chat completions there, or no such model: check OPENAI_BASE_URL (it ends in /v1 for most providers) and OPENAI_MODEL"
		case http.StatusUnauthorized, http.StatusForbidden:
			why += ": check OPENAI_API_KEY"
		}
		return "failed", []doctor.Finding{{What: "one tiny structured call to " + p.client.Info().Model, Where: where, Why: why}}, nil
	}
	var ans struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal(resp.Content, &ans); err != nil || !ans.OK {
		return "failed", []doctor.Finding{{What: "one tiny structured call to " + p.client.Info().Model, Where: where,
			Why: fmt.Sprintf("its answer does not follow the schema it was given (%.80q): use a model that supports structured outputs", resp.Content)}}, nil
	}
	return fmt.Sprintf("one structured call to %s answered in %s (%d tokens, US$%.5f)", p.client.Info().Model,
		time.Since(start).Round(10*time.Millisecond), resp.Usage.PromptTokens+resp.Usage.CompletionTokens, resp.Usage.CostUSD), nil, nil
}

// checkServer: the server recorded as running on data answers there.
func checkServer(ctx context.Context, data string) (string, []doctor.Finding, error) {
	endpoint, ok := ReadEndpoint(data)
	if !ok {
		return fmt.Sprintf("no server is running on %s (\"veredicto serve --data %s\" starts one)", data, data), nil, nil
	}
	file := filepath.Join(data, endpointFile)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		why := "nothing answers there"
		if err == nil {
			why = fmt.Sprintf("it answers HTTP %d, not the server's ok", resp.StatusCode)
		}
		return "not answering", []doctor.Finding{{What: "the server recorded in " + file, Where: endpoint,
			Why: why + ": the server stopped without removing its record; start it again (veredicto serve --data " + data + ") or delete " + file}}, nil
	}
	return fmt.Sprintf("the server at %s answers (%s)", endpoint, file), nil, nil
}

// statusOf is the HTTP status a provider's failed call answered, 0 when
// it answered none.
func statusOf(err error) int {
	if se := (*llm.StatusError)(nil); errors.As(err, &se) {
		return se.StatusCode
	}
	return 0
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || os.IsTimeout(err)
}
