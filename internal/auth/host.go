package auth

import (
	"net"
	"net/netip"
	"slices"
	"strings"
)

// HostPolicy names the Host values a server answers: the names of its own
// listen address (and, on loopback, 127.0.0.1, localhost and [::1]) plus
// any public names it was given. Any other Host — a DNS name an attacker
// pointed at 127.0.0.1 to reach the server from a browser (DNS rebinding)
// — is refused before anything else runs.
type HostPolicy struct {
	// Port is the listen port; a Host naming another port is refused. 0
	// accepts any port.
	Port string
	// Names are the accepted host names, lower case, without port or
	// brackets.
	Names []string
}

// NewHostPolicy is the policy of a server listening on addr (host:port)
// with the extra public names.
func NewHostPolicy(addr string, public ...string) HostPolicy {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	p := HostPolicy{Port: port}
	add := func(n string) {
		n = strings.ToLower(strings.Trim(n, "[]"))
		if n != "" && !slices.Contains(p.Names, n) {
			p.Names = append(p.Names, n)
		}
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if host == "" || host == "localhost" || (err == nil && (ip.IsLoopback() || ip.IsUnspecified())) {
		add("127.0.0.1")
		add("localhost")
		add("::1")
	}
	if err == nil && !ip.IsUnspecified() {
		add(ip.String())
	} else if err != nil {
		add(host)
	}
	for _, n := range public {
		add(n)
	}
	return p
}

// Allows reports whether a request's Host names this server.
func (p HostPolicy) Allows(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	if port != "" && p.Port != "" && p.Port != "0" && port != p.Port {
		return false
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.String()
	}
	return host != "" && slices.Contains(p.Names, host)
}

// HostError is a request whose Host names another server (HTTP 421).
type HostError struct{ Host string }

func (e *HostError) Error() string {
	return "host " + quoteHost(e.Host) + " is not a name of this server (start it with --public-host to add one)"
}

// ErrorName is the HTTP surface's name for it.
func (*HostError) ErrorName() string { return NameMisdirected }

func quoteHost(h string) string {
	if len(h) > 100 {
		h = h[:100] + "…"
	}
	return "\"" + strings.ToValidUTF8(h, "?") + "\""
}
