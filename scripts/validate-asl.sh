#!/usr/bin/env bash
# Validates every state machine in statemachines/ with the pinned npm
# asl-validator (package.json). Prints one line when all are valid;
# exits non-zero naming each invalid file.
set -euo pipefail
cd "$(dirname "$0")/.."
node=node_modules/.bin/node
validator=node_modules/asl-validator/dist/bin/asl-validator.js
[ -f "$validator" ] || { echo "validate-asl: $validator missing; run npm ci" >&2; exit 1; }
status=0
shopt -s nullglob
files=(statemachines/*.asl.json)
if [ ${#files[@]} -eq 0 ]; then
  echo "validate-asl: no statemachines/*.asl.json found" >&2
  exit 1
fi
for f in "${files[@]}"; do
  if ! out=$("$node" "$validator" --json-path "$f" 2>&1); then
    echo "asl-validator: $f INVALID" >&2
    echo "$out" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "asl-validator: ${#files[@]} definitions in statemachines/ valid"
exit $status
