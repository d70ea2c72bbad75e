package sdkhttp

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// sdkBody is the request body as smithy-go hands it to the HTTP client: a
// reader that answers io.EOF once closed, closed by the SDK as soon as the
// client returns. Its WriteTo (net/http's check for bytes past
// Content-Length goes through it) waits for that close, so the race of
// aws/aws-sdk-go-v2#2737 happens every time, not once in a loaded run.
type sdkBody struct {
	r      *bytes.Reader
	mu     sync.Mutex
	closed chan struct{}
	once   sync.Once
}

func newSDKBody(s string) *sdkBody {
	return &sdkBody{r: bytes.NewReader([]byte(s)), closed: make(chan struct{})}
}

func (b *sdkBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-b.closed:
		return 0, io.EOF
	default:
	}
	return b.r.Read(p)
}

func (b *sdkBody) WriteTo(w io.Writer) (int64, error) {
	if b.r.Len() == 0 { // everything was sent: what follows is the check
		<-b.closed
		return 0, io.EOF
	}
	return b.r.WriteTo(w)
}

func (b *sdkBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// TestTheSDKClosingTheBodyBreaksNoResponse sends two requests as the SDK
// does (body closed when Do returns) to a server answering more than a
// read buffer: both responses are read whole and the connection is kept
// for the second one. Through the bare transport the first response's
// connection is closed under it (net/http reads the closed body's io.EOF
// as a write error).
func TestTheSDKClosingTheBodyBreaksNoResponse(t *testing.T) {
	big := strings.Repeat("x", 256<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || string(b) != `{"stateMachineArn":"arn:x"}` {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		io.WriteString(w, big)
	}))
	defer srv.Close()
	var dials atomic.Int32
	client := New(func(tr *http.Transport) {
		d := &net.Dialer{}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		}
	})
	for i := range 2 {
		body := newSDKBody(`{"stateMachineArn":"arn:x"}`)
		req, _ := http.NewRequest("POST", srv.URL, nil)
		req.Body, req.ContentLength = body, int64(body.r.Len())
		resp, err := client.Do(req)
		body.Close() // as smithy-go's ClientHandler does
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(got) != len(big) {
			t.Fatalf("request %d: %d, %d of %d bytes, %v", i, resp.StatusCode, len(got), len(big), err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d connections dialed for two requests, want 1: the first was closed under its response", n)
	}
}

// TestReplayableBodiesAreSentAsGiven: a body net/http can replay (GetBody
// set) is not copied again, and a body shorter than its Content-Length is
// an error naming the request.
func TestReplayableBodiesAreSentAsGiven(t *testing.T) {
	var seen *http.Request
	c := Client(doFunc(func(r *http.Request) (*http.Response, error) {
		seen = r
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	}))
	req, _ := http.NewRequest("POST", "http://127.0.0.1/", strings.NewReader("{}"))
	if _, err := c.Do(req); err != nil || seen != req {
		t.Errorf("a replayable body was not sent as given (err %v)", err)
	}
	short, _ := http.NewRequest("POST", "http://127.0.0.1/x", nil)
	short.Body, short.ContentLength = io.NopCloser(strings.NewReader("{}")), 10
	if _, err := c.Do(short); err == nil || !strings.Contains(err.Error(), "POST http://127.0.0.1/x: read the request body (10 bytes)") {
		t.Errorf("short body: %v", err)
	}
}

type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }
