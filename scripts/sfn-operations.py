"""Writes internal/sfnapi/testdata/operations.json: every operation of the
Step Functions API, as botocore's stepfunctions model (2016-11-23) defines
it, with its required input members and the error shapes it may answer.
TestEveryOperation drives each one through the Go SDK, so an operation the
model gains fails that test until the server serves it.

botocore ships with the machine image and CI (the AWS CLI v1); the model is
read from the botocore that `python3` imports. Run by `go generate
./internal/sfnapi` (see generate.go).

Usage: python3 scripts/sfn-operations.py [OUT]
"""
import gzip
import json
import os
import sys

import botocore

out = sys.argv[1] if len(sys.argv) > 1 else "internal/sfnapi/testdata/operations.json"
model_dir = os.path.join(os.path.dirname(botocore.__file__), "data", "stepfunctions", "2016-11-23")
path = os.path.join(model_dir, "service-2.json.gz")
opener = gzip.open
if not os.path.exists(path):  # older botocore releases ship it uncompressed
    path, opener = os.path.join(model_dir, "service-2.json"), open
with opener(path, "rt") as f:
    model = json.load(f)

operations = []
for name, op in sorted(model["operations"].items()):
    required = []
    if "input" in op:
        required = model["shapes"][op["input"]["shape"]].get("required", [])
    operations.append({
        "name": name,
        "required": required,
        "errors": [e["shape"] for e in op.get("errors", [])],
        "hostPrefix": op.get("endpoint", {}).get("hostPrefix", ""),
    })

doc = {
    "source": "botocore %s, data/stepfunctions/2016-11-23/service-2.json (apiVersion %s)"
    % (botocore.__version__, model["metadata"]["apiVersion"]),
    "generator": "scripts/sfn-operations.py (go generate ./internal/sfnapi)",
    "operations": operations,
}
# one operation a line, so a change of the model reads as a small diff
lines = ",\n".join("  " + json.dumps(op) for op in operations)
with open(out, "w") as f:
    f.write('{"source": %s,\n "generator": %s,\n "operations": [\n%s\n]}\n'
            % (json.dumps(doc["source"]), json.dumps(doc["generator"]), lines))
print("%s: %d operations from botocore %s" % (out, len(operations), botocore.__version__))
