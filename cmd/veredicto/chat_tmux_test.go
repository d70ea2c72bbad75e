package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/poll"
)

// tmuxSession is a terminal driven through its own tmux server (a private
// socket), killed when the test ends.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func startTmux(t *testing.T, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required for the terminal test (apt-get install -y tmux): %v", err)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("veredicto-chat-test-%d", os.Getpid())}
	s.tmux("new-session", "-d", "-s", "chat", "-x", "200", "-y", "60", command)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// send types a line and presses Enter.
func (s *tmuxSession) send(line string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", "chat", "-l", line)
	s.tmux("send-keys", "-t", "chat", "Enter")
}

func (s *tmuxSession) screen() string {
	return s.tmux("capture-pane", "-p", "-J", "-t", "chat", "-S", "-500")
}

// waitFor polls the screen until it holds want (bounded at 30 s) and
// returns it.
func (s *tmuxSession) waitFor(want string) string {
	s.t.Helper()
	var scr string
	if !poll.Within(30*time.Second, func() bool {
		scr = s.screen()
		return strings.Contains(scr, want)
	}) {
		s.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, scr)
	}
	return scr
}

// TestChatTerminal drives "veredicto chat" in a real terminal against a
// live server with the offline supervisor: a delegated turn streams its
// text and tool steps and asks «¿Era esto lo que pedías?», the search it
// started asks its senior review and says it ended, and a sensitive send
// asks y/n and runs only when approved.
func TestChatTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds the CLI and drives it in tmux; make test-long runs it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, srv := startChatServer(ctx, t, nil, chat.Options{ConfirmPoll: 20 * time.Millisecond})
	t.Cleanup(srv.Start(ctx)) // as "veredicto serve" does: the search reports back
	tok := l.token(t, "acme", "ana")
	bin := filepath.Join(t.TempDir(), "veredicto")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	term := startTmux(t, fmt.Sprintf("%s chat --endpoint %s --token %s --chat term1", bin, l.base, tok))
	term.waitFor("tú> ")

	term.send("Lanza la evaluación de la búsqueda demo-cfo-andina")
	scr := term.waitFor("Evaluación de la búsqueda demo-cfo-andina iniciada")
	for _, want := range []string{"→ Delego en analista de búsqueda", "[herramienta] Delegación en el analista de búsqueda", "· search-analyst: evaluación de la búsqueda iniciada", "[✓ Delegación en el analista de búsqueda]"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, scr)
		}
	}
	// The delegation's question, answered with one key.
	term.waitFor("¿Era esto lo que pedías? [s/n, Enter para seguir]: ")
	term.send("s")
	term.waitFor("[gracias: anotado]")
	poll.Until(t, 30*time.Second, func() bool { // the offline evaluation takes about a second
		_, body := l.call(ctx, t, "GET", "/searches/demo-cfo-andina", tok, "")
		return strings.Contains(body, `"status": "SUCCEEDED"`)
	}, "the search demo-cfo-andina to succeed")
	questions := func(n int) {
		t.Helper()
		poll.Until(t, 30*time.Second, func() bool { return strings.Count(term.screen(), "¿Confirmas? [s/n]: ") >= n }, fmt.Sprintf("confirmation question %d", n))
	}
	// The search reports back to the conversation: an empty line shows
	// what it said since, its senior review asked here and its end.
	term.send("")
	questions(1)
	if scr := term.screen(); !strings.Contains(scr, "[confirmación] Revisión del consultor senior") {
		t.Errorf("the search's senior review is not asked in the chat:\n%s", scr)
	}
	term.send("s")
	ended := "[aviso] Búsqueda demo-cfo-andina (desde el turno 1): terminó con escalamiento"
	poll.Until(t, 30*time.Second, func() bool {
		if strings.Contains(term.screen(), ended) {
			return true
		}
		term.send("") // shows what came since
		return false
	}, "the search's end in the chat")
	outbox := filepath.Join(l.data, "outbox", "acme")
	count := func() int { es, _ := os.ReadDir(outbox); return len(es) }

	term.send("Envía el informe de c-001 de la búsqueda demo-cfo-andina a cliente@example.com")
	questions(2)
	if scr := term.screen(); !strings.Contains(scr, "Envío de correo, sensibilidad alta, no se puede deshacer") {
		t.Errorf("the confirmation does not say what it is:\n%s", scr)
	}
	if count() != 0 {
		t.Fatal("sent before the answer")
	}
	term.send("n")
	term.waitFor("La persona rechazó el envío")
	if count() != 0 {
		t.Fatal("sent although rejected")
	}
	term.send("Envía el informe de c-001 de la búsqueda demo-cfo-andina a cliente@example.com")
	questions(3)
	term.send("s")
	term.waitFor("Enviado 1 informe de la búsqueda demo-cfo-andina a cliente@example.com")
	if count() != 1 {
		t.Errorf("%d messages in the outbox after approving, want 1", count())
	}
	t.Logf("terminal:\n%s", term.screen())
	term.send("/exit")
}
