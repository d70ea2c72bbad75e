#!/usr/bin/env bash
# Starts `veredicto serve` on a fresh data folder and drives it with the
# load generator (cmd/loadgen): StartExecution of a 5-state Pass chain
# through the signed Step Functions API, then the report (starts/s, p50 and
# p99, completions/s, the server's CPU and RSS, the machine's load).
# Usage: scripts/bench-starts.sh SERVE LOADGEN [loadgen flags...]
# With PROFILE=file, a 20 s CPU profile of the server is saved there
# (go tool pprof SERVE file); serve then takes --pprof.
set -u -o pipefail
serve=$1 loadgen=$2
shift 2
data=$(mktemp -d "${TMPDIR:-/tmp}/bench-starts.XXXXXX")
addr=127.0.0.1:${BENCH_PORT:-18080}
pprof=127.0.0.1:${BENCH_PPROF_PORT:-16060}
# --pprof only when profiling: the script also measures a serve built
# before the flag (git worktree add /tmp/before <commit>; build it there)
"$serve" serve --addr "$addr" --data "$data" ${PROFILE:+--pprof "$pprof"} >"$data/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do
	curl -sf "http://$addr/healthz" >/dev/null && break
	kill -0 $pid 2>/dev/null || { cat "$data/serve.log" >&2; exit 1; }
	sleep 0.2
done
profiling=
if [ -n "${PROFILE:-}" ]; then
	(sleep 2; curl -sf -o "$PROFILE" "http://$pprof/debug/pprof/profile?seconds=20") &
	profiling=$!
fi
echo "bench-starts: serve (pid $pid) on $addr, data $data; $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$loadgen" -endpoint "http://$addr" -data "$data" -pid $pid "$@"
status=$?
[ -n "$profiling" ] && wait "$profiling"
exit $status
