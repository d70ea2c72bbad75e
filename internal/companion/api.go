package companion

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/platforms"
)

// API is what the HTTP routes of the companion call: create an
// application and start its execution, read it, and run the phases the
// user triggers. Follow-up results are write-once records after the
// pipeline's (companion/<tenant>/<id>/ctx/90-followup-NNNN), so two
// concurrent follow-ups never overwrite each other: the second is a
// ConflictError.
type API struct {
	Service  *Service
	FollowUp FollowUp
	// Start starts CareerCompanionStateMachine with the execution name and
	// input (the sfn client locally and on AWS).
	Start func(ctx context.Context, name string, input []byte) error
	Now   func() time.Time
}

// CreateRequest is POST /companion/applications.
type CreateRequest struct {
	JD          string `json:"jd"`
	ProfileYAML string `json:"profile_yaml"`
	Mode        string `json:"mode"`
	Company     string `json:"company"`
	Platform    string `json:"platform"`
	Refresh     bool   `json:"refresh"`
}

// Created is its answer.
type Created struct {
	ApplicationID string `json:"application_id"`
	Execution     string `json:"execution"`
}

// Create stores the inputs and starts the execution (named
// <tenant>-<application_id>: posting the same application twice starts it
// once).
func (a *API) Create(ctx context.Context, tenant string, req CreateRequest) (Created, error) {
	if strings.TrimSpace(req.JD) == "" {
		return Created{}, &veredicto.InvalidInputError{Field: "jd", Problem: "is required"}
	}
	if len(req.JD) > 200_000 || len(req.ProfileYAML) > 200_000 {
		return Created{}, &veredicto.InvalidInputError{Field: "jd", Problem: "jd and profile_yaml must be at most 200000 bytes each"}
	}
	in, err := a.Service.Create(ctx, tenant, []byte(req.JD), []byte(req.ProfileYAML), req.Mode, req.Company, req.Platform)
	if err != nil {
		return Created{}, err
	}
	in.Refresh = req.Refresh
	b, err := json.Marshal(in)
	if err != nil {
		return Created{}, err
	}
	name := tenant + "-" + in.ApplicationID
	if err := a.Start(ctx, name, b); err != nil {
		return Created{}, fmt.Errorf("start %s: %w", name, err)
	}
	return Created{ApplicationID: in.ApplicationID, Execution: name}, nil
}

// MaxFollowUps bounds the follow-up records of one application.
const MaxFollowUps = 500

func followKey(tenant, id string, n int) string {
	return fmt.Sprintf("%sctx/90-followup-%04d", Prefix(tenant, id), n)
}

// Get returns the application's latest context, follow-ups included.
func (a *API) Get(ctx context.Context, tenant, id string) (*Context, error) {
	c, _, err := a.latest(ctx, tenant, id)
	return c, err
}

func (a *API) latest(ctx context.Context, tenant, id string) (*Context, int, error) {
	in := TaskInput{StartInput: StartInput{Tenant: tenant, ApplicationID: id}}
	c, err := a.Service.Load(ctx, in)
	if err != nil {
		return nil, 0, err
	}
	n := 0
	for ; n < MaxFollowUps; n++ {
		b, ok, err := a.Service.Store.Get(ctx, followKey(tenant, id, n+1))
		if err != nil {
			return nil, 0, err
		}
		if !ok {
			break
		}
		var f Context
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, 0, err
		}
		c = &f
	}
	return c, n, nil
}

// FollowUpRequest is the body of POST /companion/applications/{id}/{phase}.
type FollowUpRequest struct {
	Platform    string   `json:"platform"`
	Questions   []string `json:"questions"`
	Confirm     bool     `json:"confirm"`
	Answers     []string `json:"answers"`
	Instruction string   `json:"instruction"`
}

// Preview is the answer to an unconfirmed phase-4 request: the platform's
// layer-2 fields to confirm.
type Preview struct {
	PlatformName        string            `json:"platform_name"`
	Layer2Fields        []platforms.Field `json:"layer_2_fields"`
	ConfirmationMessage string            `json:"confirmation_message"`
}

// FollowUpPhases are the triggered phases by route name.
var FollowUpPhases = []string{"answer", "verify", "audit", "retro", "refine"}

// RunFollowUp runs one triggered phase and stores the new context. An
// answer request for a platform without confirm returns the preview and
// changes nothing.
func (a *API) RunFollowUp(ctx context.Context, tenant, id, phase string, req FollowUpRequest) (*Context, *Preview, error) {
	c, n, err := a.latest(ctx, tenant, id)
	if err != nil {
		return nil, nil, err
	}
	if n >= MaxFollowUps {
		return nil, nil, &veredicto.ConflictError{What: "application " + id, Problem: fmt.Sprintf("has reached %d follow-ups", MaxFollowUps)}
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	// What the phase does, once its inputs are known (a preview asks
	// first, and changes nothing).
	var run func(context.Context) error
	switch phase {
	case "answer":
		// Before any preview: a paused or unfinished application has no
		// CV content to answer from.
		if err := RequireCV(c, "answer"); err != nil {
			return nil, nil, err
		}
		platform := req.Platform
		if platform == "" {
			platform = c.PlatformName
		}
		qs := []string{}
		if platform != "" {
			s, err := platforms.Load(platform)
			if err != nil {
				return nil, nil, &veredicto.InvalidInputError{Field: "platform", Problem: err.Error()}
			}
			if !req.Confirm {
				var labels []string
				for _, f := range s.Layer2Fields {
					labels = append(labels, f.Label)
				}
				return nil, &Preview{PlatformName: s.PlatformName, Layer2Fields: s.Layer2Fields,
					ConfirmationMessage: fmt.Sprintf("%s generalmente pide: %s. ¿Te aparecen estas mismas?", s.DisplayName, strings.Join(labels, ", "))}, nil
			}
			for _, f := range s.Layer2Fields {
				qs = append(qs, f.Question)
			}
			platform = s.PlatformName
		}
		run = func(ctx context.Context) error {
			return Answer(ctx, a.FollowUp, c, platform, append(qs, req.Questions...))
		}
	case "verify":
		run = func(ctx context.Context) error { return Verify(ctx, a.FollowUp, c) }
	case "audit":
		run = func(ctx context.Context) error { return Audit(ctx, a.FollowUp, c) }
	case "retro":
		run = func(ctx context.Context) error { return Retro(ctx, a.FollowUp, c, req.Answers) }
	case "refine":
		run = func(ctx context.Context) error {
			at := now()
			if sc := audit.ScopeFrom(ctx); sc != nil {
				if at, err = sc.Now(ctx, "refine"); err != nil {
					return err
				}
			}
			_, err := Refine(ctx, a.FollowUp, c, req.Instruction, at)
			return err
		}
	default:
		return nil, nil, &veredicto.NotFoundError{What: "phase " + phase}
	}
	in := TaskInput{StartInput: StartInput{Tenant: tenant, ApplicationID: id}}
	save := func(ctx context.Context) error {
		b, err := json.Marshal(c)
		if err != nil {
			return err
		}
		ok, err := a.Service.Store.PutIfAbsent(ctx, followKey(tenant, id, n+1), b)
		if err != nil {
			return err
		}
		if !ok {
			return &veredicto.ConflictError{What: "application " + id, Problem: "another follow-up completed first; read it and retry"}
		}
		return a.Service.publish(ctx, in, c, b)
	}
	// The phase goes into the record of the execution that wrote the
	// application's files, so that record still verifies after it.
	ctx, err = a.Service.applicationScope(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	if err := FollowUpCommand(ctx, c, phase, run, save); err != nil {
		return nil, nil, err
	}
	return c, nil, nil
}
