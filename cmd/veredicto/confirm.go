package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/labels"
)

const confirmUsage = `Usage:
  veredicto confirm list [--tenant T] [--data DIR] [--json | --ids]
  veredicto confirm approve ID [--comment C] [--tenant T] [--data DIR] [--endpoint URL]
  veredicto confirm reject ID [--comment C] [--tenant T] [--data DIR] [--endpoint URL]

Lists and resolves the confirmations workflows wait for (seed 004 §3),
from another shell than "veredicto serve --data DIR". With a server running
on DIR (or --endpoint), the decision goes through its confirmation
service, POST /api/confirmations, as you: with your token (--token,
$VEREDICTO_TOKEN), or signed with your access key (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, as "veredicto credentials --tenant T" exports them),
else with a token signed by the server's key under DIR for local:$USER. The
decision records that name, and the service delivers it to the waiting
workflow. Without a server, the decision is recorded in DIR
under your OS user and delivered when the server starts again.

Senior reviews of "veredicto search run" (same --data): a run with --review
waits in its own process; the decision is recorded here and that run
delivers it (this command waits a few seconds to say it did). A review no
run waits for (a run without --review) is decided here and applied when
the search runs again.

"list" shows damaged confirmations too (status damaged: the record could
not be read and was moved to quarantine); they cannot be decided.

Exit status: 0 resolved; 1 not found, already resolved, expired, damaged, or the
server could not be reached (the decision is then recorded: run the same
command again to deliver it); 2 bad usage.

Flags:
`

type confirmConfig struct {
	action   string // list, approve, reject
	id       string
	tenant   string
	data     string
	endpoint string
	comment  string
	token    string
	json     bool
	ids      bool
	// deliveryWait: how long approve/reject follows a decision another
	// process delivers (default 15 s).
	deliveryWait time.Duration
}

func (m *Main) runConfirm(ctx context.Context, args []string) int {
	if len(args) == 0 || (args[0] != "list" && args[0] != "approve" && args[0] != "reject") {
		fmt.Fprint(m.Stderr, strings.Replace(confirmUsage, "\nFlags:\n", "", 1))
		return exitUsage
	}
	cfg := confirmConfig{action: args[0]}
	fs := subcommandFlags("confirm "+cfg.action, confirmUsage, m.Stderr)
	fs.StringVar(&cfg.tenant, "tenant", "default", "tenant whose confirmations to see")
	fs.StringVar(&cfg.data, "data", app.DefaultDataDir, "data folder of the server")
	fs.StringVar(&cfg.endpoint, "endpoint", "", "the running server (default: the one \"veredicto serve --data DIR\" recorded)")
	fs.StringVar(&cfg.comment, "comment", "", "comment recorded with the decision")
	fs.StringVar(&cfg.token, "token", "", "your bearer token for the server (default: $VEREDICTO_TOKEN, else one signed under --data for local:$USER)")
	fs.BoolVar(&cfg.json, "json", false, "list as JSON, previews in full")
	fs.BoolVar(&cfg.ids, "ids", false, "list only the ids of the open confirmations, one a line, oldest first (for scripts: ID=$(veredicto confirm list --ids | head -1))")
	positional, err := parseInterleaved(fs, args[1:])
	if err == flag.ErrHelp {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	want := 1
	if cfg.action == "list" {
		want = 0
	}
	if len(positional) != want {
		fs.Usage()
		fmt.Fprintf(m.Stderr, "veredicto confirm %s: want %d argument(s), got %d\n", cfg.action, want, len(positional))
		return exitUsage
	}
	if want == 1 {
		cfg.id = positional[0]
	}
	if !veredicto.ValidID(cfg.tenant) {
		fmt.Fprintf(m.Stderr, "veredicto confirm: --tenant must be a tenant id: %s\n", veredicto.IDRule)
		return exitUsage
	}
	if cfg.json && cfg.ids {
		fmt.Fprintln(m.Stderr, "veredicto confirm list: give --json or --ids, not both")
		return exitUsage
	}
	if cfg.token == "" {
		cfg.token = os.Getenv("VEREDICTO_TOKEN")
	}
	if cfg.endpoint == "" {
		cfg.endpoint, _ = app.ReadEndpoint(cfg.data)
	}
	return m.confirmRun(ctx, cfg)
}

func (m *Main) confirmRun(ctx context.Context, cfg confirmConfig) int {
	svc := &confirm.Service{
		Store:  fileconfirm.Local(cfg.data),
		Events: fileeventlog.Local(cfg.data),
		Tasks:  noServer{data: cfg.data},
		Logger: slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if cfg.action == "list" {
		list, more, err := svc.List(ctx, cfg.tenant)
		if err != nil {
			fmt.Fprintf(m.Stderr, "veredicto confirm list: %v\n", err)
			return exitFailed
		}
		if more {
			fmt.Fprintf(m.Stderr, "veredicto confirm list: these are the %d oldest open confirmations; more wait and show as these are decided\n", len(list))
		}
		if cfg.ids {
			for _, c := range list {
				if c.Status == confirm.StatusPending {
					fmt.Fprintln(m.Stdout, c.ID)
				}
			}
			return exitOK
		}
		if cfg.json {
			if list == nil {
				list = []confirm.View{} // a JSON array, [] when empty
			}
			enc := json.NewEncoder(m.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(list)
			return exitOK
		}
		printConfirmations(m.Stdout, list)
		if len(list) == 0 {
			m.otherTenantsHint(ctx, cfg, svc)
		}
		return exitOK
	}
	res := confirm.Resolution{ID: cfg.id, Approved: cfg.action == "approve", Comment: cfg.comment}
	var v confirm.View
	var err error
	if cfg.endpoint != "" {
		v, err = m.resolveOnServer(ctx, cfg, res)
	} else {
		// No server: the decision is recorded here, under the OS user who
		// wrote it; the server delivers it when it starts.
		res.By = "local:" + localUser()
		v, err = svc.Resolve(ctx, cfg.tenant, res)
	}
	var nf *veredicto.NotFoundError
	if errors.As(err, &nf) {
		fmt.Fprintf(m.Stderr, "veredicto confirm %s: %v\n", cfg.action, err)
		m.otherTenantsHint(ctx, cfg, svc)
		return exitFailed
	}
	if err != nil {
		var tr *veredicto.TransientError
		if errors.As(err, &tr) {
			fmt.Fprintf(m.Stderr, "veredicto confirm %s: %v\nThe decision is recorded; it is delivered when \"veredicto serve --data %s\" runs (run the same command again to deliver it now).\n", cfg.action, err, cfg.data)
			return exitFailed
		}
		fmt.Fprintf(m.Stderr, "veredicto confirm %s: %v\n", cfg.action, err)
		return exitFailed
	}
	switch {
	case v.Delivery == confirm.DeliveryNextRun:
		fmt.Fprintf(m.Stdout, "%s %s por %s: registrada. Ninguna ejecución la esperaba: la próxima ejecución de la búsqueda la aplica (una que empiece a esperarla la toma de inmediato) (veredicto search run DIR --data %s)\n",
			v.ID, labels.Phrase(labels.ConfirmationStatus, v.Status), v.DecidedBy, cfg.data)
	case v.Status == confirm.StatusResolving && v.Resolver != "":
		return m.awaitDelivery(ctx, cfg, svc, v)
	default:
		fmt.Fprintf(m.Stdout, "%s %s (ejecución %s)\n", v.ID, labels.Phrase(labels.ConfirmationStatus, v.Status), v.Execution)
	}
	return exitOK
}

// awaitDelivery follows a decision whose task waits in another process
// (Record.Resolver: a "search run --review"): the decision is recorded;
// that process delivers it. It reports what happened within
// cfg.deliveryWait, and never claims a delivery it did not see.
func (m *Main) awaitDelivery(ctx context.Context, cfg confirmConfig, svc *confirm.Service, v confirm.View) int {
	wait := cfg.deliveryWait
	if wait <= 0 {
		wait = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		rec, err := svc.Store.Get(ctx, cfg.tenant, v.ID)
		if err == nil && rec.Status != confirm.StatusResolving {
			now := rec.View(time.Now())
			switch now.Status {
			case confirm.StatusDamaged:
				fmt.Fprintf(m.Stderr, "veredicto confirm %s: %v\n", cfg.action, rec.DamagedError())
				return exitFailed
			case confirm.StatusExpired:
				fmt.Fprintf(m.Stderr, "veredicto confirm %s: %s expired: the run stopped waiting before the decision reached it\n", cfg.action, v.ID)
				return exitFailed
			default:
				if now.Delivery == confirm.DeliveryNextRun {
					fmt.Fprintf(m.Stdout, "%s %s: registrada; la ejecución que la esperaba se había detenido, así que la próxima ejecución de la búsqueda la aplicó o la aplicará\n", v.ID, labels.Phrase(labels.ConfirmationStatus, now.Status))
				} else {
					fmt.Fprintf(m.Stdout, "%s %s: entregada a la ejecución que la esperaba (ejecución %s)\n", v.ID, labels.Phrase(labels.ConfirmationStatus, now.Status), now.Execution)
				}
				return exitOK
			}
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(m.Stdout, "%s: decisión registrada (%s), aún sin entregar: espera a que %s la tome. Si esa ejecución se detuvo, la decisión se aplica cuando la búsqueda vuelva a ejecutarse (veredicto search run DIR --data %s)\n",
				v.ID, map[string]string{"approve": "aprobar", "reject": "rechazar"}[cfg.action], v.Resolver, cfg.data)
			return exitOK
		case <-tick.C:
		}
	}
}

// printConfirmations lists confirmations for a person: what each asks,
// in words, and its preview as labelled lines (--json has the codes).
func printConfirmations(w io.Writer, list []confirm.View) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No hay confirmaciones pendientes.")
		return
	}
	fmt.Fprintf(w, "%s:\n", labels.Count(len(list), "confirmación pendiente", "confirmaciones pendientes"))
	for _, c := range list {
		fmt.Fprintf(w, "\n%s · %s\n", c.ID, labels.Of(labels.ConfirmationStatus, c.Status))
		if c.Status == confirm.StatusDamaged {
			fmt.Fprintf(w, "  Registro dañado (%s): se movió a cuarentena y no se puede decidir; su flujo sigue esperando (veredicto doctor lo muestra).\n", c.Damage)
			continue
		}
		undo := "no se puede deshacer"
		if c.Undoable {
			undo = "se puede deshacer"
		}
		fmt.Fprintf(w, "  %s (%s · sensibilidad %s · %s)\n", labels.Of(labels.Tool, c.ToolName), labels.Of(labels.Category, c.Category),
			labels.Of(labels.Sensitivity, c.Sensitivity), undo)
		if q, ok := labels.Lookup(labels.Question, c.ToolName); ok {
			fmt.Fprintf(w, "  %s\n", q)
		}
		// The execution's name: its ARN is the system's (--json has it).
		fmt.Fprintf(w, "  Creada %s · ejecución %s\n", c.CreatedAt.Format("2006-01-02 15:04"), c.Execution[strings.LastIndexByte(c.Execution, ':')+1:])
		fmt.Fprint(w, labels.PreviewText(c.Preview, "    "))
	}
}

// otherTenantsHint names, on stderr, the other tenants of the data folder
// with open confirmations: the usual reason a list is empty or an id is
// not found is a missing --tenant.
func (m *Main) otherTenantsHint(ctx context.Context, cfg confirmConfig, svc *confirm.Service) {
	tenants, err := fileconfirm.Local(cfg.data).Tenants()
	if err != nil {
		return
	}
	var others []string
	for _, t := range tenants {
		if t == cfg.tenant {
			continue
		}
		if list, _, err := svc.List(ctx, t); err == nil && len(list) > 0 {
			others = append(others, t)
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(m.Stderr, "(tenant %s; open confirmations are held by %s: add --tenant)\n", cfg.tenant, strings.Join(others, ", "))
	}
}

// noServer is the confirmation service's TaskSender when no server runs:
// a decision whose task waits in the server stays recorded, delivered by
// the server's start-up sweep.
type noServer struct{ data string }

func (n noServer) err() error {
	return &veredicto.TransientError{Op: "deliver the decision", Err: fmt.Errorf("no server is running on %s", n.data)}
}

func (n noServer) SendTaskSuccess(context.Context, *sfn.SendTaskSuccessInput, ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	return nil, n.err()
}

func (n noServer) SendTaskFailure(context.Context, *sfn.SendTaskFailureInput, ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	return nil, n.err()
}

// resolveOnServer decides through the running server's confirmation
// service (POST /api/confirmations), which records the token's subject as
// the decider and delivers the decision.
func (m *Main) resolveOnServer(ctx context.Context, cfg confirmConfig, res confirm.Resolution) (confirm.View, error) {
	body, _ := json.Marshal(map[string]any{"id": res.ID, "approved": res.Approved, "comment": res.Comment})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(cfg.endpoint, "/")+"/api/confirmations", bytes.NewReader(body))
	if err != nil {
		return confirm.View{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	// Who decides: the token given, else a tenant's access key in the
	// environment ("eval $(veredicto credentials --tenant T)": the request
	// is signed, and the key's name is the decider), else a token the
	// server's key signs for the OS user.
	token := cfg.token
	id, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	switch {
	case token != "":
		req.Header.Set("Authorization", "Bearer "+token)
	case id != "" && secret != "":
		sum := sha256.Sum256(body)
		region := cmp.Or(os.Getenv("AWS_DEFAULT_REGION"), os.Getenv("AWS_REGION"), app.DefaultRegion)
		if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: id, SecretAccessKey: secret}, req, hex.EncodeToString(sum[:]), "execute-api", region, time.Now()); err != nil {
			return confirm.View{}, err
		}
	default:
		if found, _ := app.ReadEndpoint(cfg.data); found != cfg.endpoint {
			return confirm.View{}, fmt.Errorf("%s is not the server running on %s: give your token with --token or $VEREDICTO_TOKEN", cfg.endpoint, cfg.data)
		}
		if token, err = app.SignLocalToken(cfg.data, cfg.tenant, "local:"+localUser(), 10*time.Minute); err != nil {
			return confirm.View{}, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return confirm.View{}, fmt.Errorf("the server at %s did not answer (%v): nothing was recorded; start \"veredicto serve --data %s\" or decide without it once it has stopped", cfg.endpoint, err, cfg.data)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusOK {
		var v confirm.View
		if err := json.Unmarshal(b, &v); err != nil {
			return confirm.View{}, fmt.Errorf("the server's answer is not a confirmation: %w", err)
		}
		return v, nil
	}
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	msg := strings.TrimSpace(e.Error)
	if msg == "" {
		msg = resp.Status
	}
	switch resp.StatusCode {
	case http.StatusNotFound:
		return confirm.View{}, &veredicto.NotFoundError{What: "confirmation " + res.ID}
	case http.StatusConflict:
		return confirm.View{}, &veredicto.ConflictError{What: "confirmation " + res.ID, Problem: strings.TrimPrefix(msg, "confirmation "+res.ID+": ")}
	case http.StatusGone:
		return confirm.View{}, &confirm.ExpiredError{ID: res.ID}
	case http.StatusServiceUnavailable:
		return confirm.View{}, &veredicto.TransientError{Op: "deliver confirmation " + res.ID, Err: errors.New(msg)}
	}
	return confirm.View{}, fmt.Errorf("the server refused the decision: %s", msg)
}
