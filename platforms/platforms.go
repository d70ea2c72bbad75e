// Package platforms embeds the application platforms' schemas
// (platforms/<name>.yaml): the layer-2 fields a platform asks every
// applicant, which the career companion's phase 4 previews and confirms
// with the user before answering.
package platforms

import (
	"embed"
	"fmt"
	"sort"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/yamldoc"
)

//go:embed *.yaml
var files embed.FS

// Schema is one platform's schema.
type Schema struct {
	PlatformName string  `yaml:"platform_name" json:"platform_name"`
	DisplayName  string  `yaml:"display_name" json:"display_name"`
	Layer2Fields []Field `yaml:"layer_2_fields" json:"layer_2_fields"`
}

// Field is a fixed question of the platform.
type Field struct {
	ID       string `yaml:"id" json:"id"`
	Label    string `yaml:"label" json:"label"`
	Question string `yaml:"question" json:"question"`
}

// Names lists the embedded platforms.
func Names() []string {
	ents, _ := files.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// Load returns the schema of platform name; an unknown name is a
// *veredicto.NotFoundError listing the known ones.
func Load(name string) (Schema, error) {
	if strings.ContainsAny(name, "/\\.") || name == "" {
		return Schema{}, &veredicto.NotFoundError{What: fmt.Sprintf("platform %q (known: %s)", name, strings.Join(Names(), ", "))}
	}
	data, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return Schema{}, &veredicto.NotFoundError{What: fmt.Sprintf("platform %q (known: %s)", name, strings.Join(Names(), ", "))}
	}
	return Parse("platforms/"+name+".yaml", data)
}

// Parse decodes a platform schema strictly.
func Parse(file string, data []byte) (Schema, error) {
	var s Schema
	if err := yamldoc.Decode(file, data, &s); err != nil {
		return s, err
	}
	if s.PlatformName == "" {
		return s, &veredicto.InvalidInputError{File: file, Field: "platform_name", Problem: "is required"}
	}
	if len(s.Layer2Fields) == 0 {
		return s, &veredicto.InvalidInputError{File: file, Field: "layer_2_fields", Problem: "needs at least one field"}
	}
	seen := map[string]bool{}
	for i, f := range s.Layer2Fields {
		if f.ID == "" || seen[f.ID] {
			return s, &veredicto.InvalidInputError{File: file, Field: fmt.Sprintf("layer_2_fields[%d].id", i), Problem: "is missing or repeated"}
		}
		seen[f.ID] = true
		if strings.TrimSpace(f.Question) == "" {
			return s, &veredicto.InvalidInputError{File: file, Field: fmt.Sprintf("layer_2_fields[%d].question", i), Problem: "is required"}
		}
	}
	return s, nil
}
