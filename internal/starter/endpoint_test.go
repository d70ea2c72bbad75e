package starter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/veredicto/veredicto"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/sfnapi"
	"github.com/veredicto/veredicto/internal/starter"
)

// TestEndpointAgainstServe starts and describes executions through the sfn
// client against the local control plane, as the trigger and the API do when
// VEREDICTO_SFN_ENDPOINT is set.
func TestEndpointAgainstServe(t *testing.T) {
	ctx := context.Background()
	m, err := control.Open(ctx, control.Config{Dir: t.TempDir(), Registry: asl.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	srv := apitest.Serve(t, sfnapi.New(m, sfnapi.Options{}), nil)
	if _, err := m.RegisterStateMachine("ExecutiveSearchStateMachine", `{"StartAt":"Hold","States":{"Hold":{"Type":"Wait","Seconds":3600,"End":true}}}`); err != nil {
		t.Fatal(err)
	}
	s := starter.NewSFN(srv.SFN(srv.Operator(t)), control.StateMachineARN("ExecutiveSearchStateMachine"))
	name := starter.ExecutionName("acme", "s-1")
	ex, err := s.Start(ctx, name, []byte(`{"tenant":"acme","search_id":"s-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := control.ExecutionARN("ExecutiveSearchStateMachine", name); !ex.Started || ex.ARN != want {
		t.Errorf("Start = %+v, want started %s", ex, want)
	}
	// another input under the same name: already there, not started again
	again, err := s.Start(ctx, name, []byte(`{"tenant":"acme","search_id":"s-1","concurrency":2}`))
	if err != nil || again.Started || again.ARN != ex.ARN {
		t.Errorf("second Start = %+v, %v; want the existing execution, not started", again, err)
	}
	st, err := s.Describe(ctx, name)
	if err != nil || st.Status != "RUNNING" || st.StartedAt.IsZero() || st.ARN != ex.ARN {
		t.Errorf("Describe = %+v, %v; want RUNNING since a time, with ARN %s", st, err, ex.ARN)
	}
	_, err = s.Describe(ctx, "nope")
	var nf *veredicto.NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("Describe of a missing execution: %v, want NotFoundError", err)
	}
}
