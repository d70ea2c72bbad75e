#!/usr/bin/env bash
# Builds the CLI for make, saying on stderr what it does: a first build
# downloads and compiles every dependency, which takes minutes, so the
# packages are counted as they compile; downloads, compiler errors and
# anything else go through as they are. Usage: scripts/build-cli.sh GO OUT
set -u -o pipefail
go=$1 out=$2
echo "make: building $out (a first build downloads and compiles the dependencies: a few minutes; later builds take seconds)" >&2
start=$SECONDS
n=0
"$go" build -v -o "$out" ./cmd/veredicto 2>&1 | {
	while IFS= read -r line; do
		case $line in
		*[[:space:]:]*) printf '%s\n' "$line" >&2 ;; # a download, an error: as it is
		*)
			n=$((n + 1))
			if ((n % 50 == 0)); then echo "make: $n packages compiled ($((SECONDS - start)) s)…" >&2; fi
			;;
		esac
	done
}
status=$?
if ((status != 0)); then
	echo "make: building $out failed" >&2
	exit "$status"
fi
echo "make: $out built in $((SECONDS - start)) s" >&2
