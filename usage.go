package veredicto

// Usage is what one or more model calls consumed. Stage records, reports and
// the per-search usage ledger all carry it.
type Usage struct {
	Calls            int     `json:"calls"`
	PromptTokens     int     `json:"prompt_tokens"`
	CachedTokens     int     `json:"cached_prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.Calls += u2.Calls
	u.PromptTokens += u2.PromptTokens
	u.CachedTokens += u2.CachedTokens
	u.CompletionTokens += u2.CompletionTokens
	u.CostUSD += u2.CostUSD
}

// ModelInfo names the provider and model behind an analysis, for reports and
// for the hash that keys a stored stage output.
type ModelInfo struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
}
