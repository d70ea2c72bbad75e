// Package corpus embeds the delegation corpus of issue 35 (README.md
// beside it): the train split a recalibration fits on and the held-out
// split it is judged by, so a server or a Lambda refits without the
// repository.
package corpus

import _ "embed"

// Files of the two splits, as chat.LoadCorpus reads them.
const (
	TrainFile   = "examples/delegation/corpus/train.yaml"
	HeldoutFile = "examples/delegation/corpus/heldout.yaml"
)

var (
	//go:embed train.yaml
	Train []byte
	//go:embed heldout.yaml
	Heldout []byte
)
