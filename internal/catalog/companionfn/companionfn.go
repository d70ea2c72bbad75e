// Package companionfn lists the career companion's Tasks (seed 001), bound
// to the companion kind's services: internal/catalog aggregates it,
// internal/app/companionapp is its Lambda entry point. Its HTTP routes are
// the companion-api kind's (internal/catalog/companionapifn).
package companionfn

import (
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/companion"
)

// Services are what the companion functions' handlers are bound to.
type Services struct {
	Companion *companion.Service
}

// Functions are the career companion's Tasks.
func Functions() []function.Function {
	return []function.Function{
		function.Bind(companion1("CompanionIntentFunction", "companion-intent", "the career companion's profile check and intent classifier (seed 001).", "companion-intent.json"),
			companionDeps, (*companion.Service).Intent),
		function.Bind(companion1("CompanionValidateFunction", "companion-validate", "checks the JD lists requirements before phase 1.", "companion-validate.json"),
			companionDeps, (*companion.Service).Validate),
		function.Bind(companion1("CompanionCultureRadarFunction", "companion-culture-radar", "phase 1, the culture radar.", "companion-culture-radar.json"),
			companionDeps, (*companion.Service).CultureRadar),
		function.Bind(companion1("CompanionCacheLookupFunction", "companion-cache-lookup", "the classification cache lookup by input hash.", "companion-cache-lookup.json"),
			companionDeps, (*companion.Service).CacheLookup),
		function.Bind(companion1("CompanionClassifyFunction", "companion-classify", "phase 2a, requirements classified A-D and matched.", "companion-classify.json"),
			companionDeps, (*companion.Service).Classify),
		function.Bind(companion1("CompanionSasFunction", "companion-sas", "phase 2b, the 5 SAS dimensions.", "companion-sas.json"),
			companionDeps, (*companion.Service).SAS),
		function.Bind(companion1("CompanionScoringFunction", "companion-scoring", "phase 2c, the ScoringEngine (code only).", "companion-scoring.json"),
			companionDeps, (*companion.Service).Scoring),
		function.Bind(companion1("CompanionDecisionFunction", "companion-decision", "records the answer to the anti-impostor pause.", "companion-decision.json"),
			companionDeps, (*companion.Service).RecordDecision),
		function.Bind(companion1("CompanionDraftFunction", "companion-draft", "phase 3, the CV content.", "companion-draft.json"),
			companionDeps, (*companion.Service).Draft),
	}
}

func companion1(id, folder, doc, sample string) function.Function {
	return function.Function{LogicalID: id, Folder: folder, Kind: function.KindCompanion, Doc: doc,
		StateMachines: []string{function.CareerCompanion}, Events: []string{sample}}
}

func companionDeps(s *Services) *companion.Service { return s.Companion }
