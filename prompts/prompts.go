// Package prompts embeds the agents' system prompts (Spanish, one Markdown
// file per agent or schema: gem1…gem5, correction, flags_contradiction) and versions them by content, so every contract records
// the exact prompt it was produced with and a changed prompt never reuses a
// stage computed with the old one.
package prompts

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
)

//go:embed *.md
var files embed.FS

// System returns the system prompt of agent ("gem1", "correction", …).
func System(agent string) (string, error) {
	b, err := files.ReadFile(agent + ".md")
	if err != nil {
		return "", fmt.Errorf("no prompt for agent %q (want prompts/%s.md)", agent, agent)
	}
	return string(b), nil
}

// PromptVersion is "<agent>@<first 12 hex digits of the prompt's SHA-256>",
// or "<agent>@missing" when the agent has no prompt file.
func PromptVersion(agent string) string {
	b, err := files.ReadFile(agent + ".md")
	if err != nil {
		return agent + "@missing"
	}
	sum := sha256.Sum256(b)
	return agent + "@" + hex.EncodeToString(sum[:])[:12]
}
