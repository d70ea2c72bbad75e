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
	"strings"
	"sync"
)

//go:embed *.md
var files embed.FS

// prompt is an agent's prompt and its version, read and hashed once: the
// files are embedded, and every call of an agent asks for them.
type prompt struct{ text, version string }

var loaded sync.Map // agent → prompt, agents with a file only

func lookup(agent string) (prompt, bool) {
	if p, ok := loaded.Load(agent); ok {
		return p.(prompt), true
	}
	b, err := files.ReadFile(agent + ".md")
	if err != nil {
		return prompt{}, false
	}
	sum := sha256.Sum256(b)
	p := prompt{text: string(b), version: agent + "@" + hex.EncodeToString(sum[:])[:12]}
	loaded.Store(agent, p)
	return p, true
}

// System returns the system prompt of agent ("gem1", "correction", …).
func System(agent string) (string, error) {
	p, ok := lookup(agent)
	if !ok {
		return "", fmt.Errorf("no prompt for agent %q (want prompts/%s.md)", agent, agent)
	}
	return p.text, nil
}

// PromptVersion is "<agent>@<first 12 hex digits of the prompt's SHA-256>",
// or "<agent>@missing" when the agent has no prompt file.
func PromptVersion(agent string) string {
	p, ok := lookup(agent)
	if !ok {
		return agent + "@missing"
	}
	return p.version
}

// Defuse returns text that cannot open or close a data block: every run
// of three or more '<' or of three or more '>' (the marks are "<<<" and
// ">>>") is written with a space between its characters, so the only
// marks in a message are the ones the code writes around the data.
func Defuse(text string) string {
	if !strings.Contains(text, "<<<") && !strings.Contains(text, ">>>") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/2)
	for i := 0; i < len(text); {
		c := text[i]
		j := i + 1
		if c == '<' || c == '>' {
			for j < len(text) && text[j] == c {
				j++
			}
		}
		if j-i >= 3 {
			for k := i; k < j; k++ {
				if k > i {
					b.WriteByte(' ')
				}
				b.WriteByte(c)
			}
		} else {
			b.WriteString(text[i:j])
		}
		i = j
	}
	return b.String()
}
