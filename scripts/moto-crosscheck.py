"""Runs the service-free cases of the conformance corpus (no Task state)
through moto's Step Functions interpreter (moto 5.2.1, a port of
LocalStack's, shipped with the machine image) and compares each outcome with
the expected one written from the AWS documentation.

This is a second opinion, not the reference: a case whose expectation moto
does not meet may say why in "moto_disagrees"; the report lists the others.
Informational: the exit status is 0 unless the script itself cannot run.

Usage: python3 scripts/moto-crosscheck.py [testdata/conformance]
"""
import copy
import glob
import json
import os
import sys
import time

import boto3
from moto import mock_aws
import moto.stepfunctions.parser.models as parser_models

# moto 5.2.1 deep-copies the state machine, execution locks included, at
# every StartExecution and fails in-process ("cannot pickle '_thread.RLock'
# object"); a shallow copy keeps what the execution needs.
parser_models.copy = type("ShallowCopy", (), {"deepcopy": staticmethod(copy.copy)})


def has_task(definition):
    return '"Task"' in json.dumps(definition)


def outcome(sfn, name, case):
    arn = sfn.create_state_machine(
        name=name, definition=json.dumps(case["definition"]),
        roleArn="arn:aws:iam::123456789012:role/crosscheck")["stateMachineArn"]
    ex = sfn.start_execution(stateMachineArn=arn, input=json.dumps(case["input"]))["executionArn"]
    for _ in range(400):
        d = sfn.describe_execution(executionArn=ex)
        if d["status"] != "RUNNING":
            break
        time.sleep(0.05)
    if d["status"] == "SUCCEEDED":
        raw = d.get("output", "null")
        try:
            return {"output": json.loads(raw)}
        except ValueError:
            return {"output": raw}
    return {"error": d.get("error"), "cause": d.get("cause")}


def same(got, want):
    if "error" in want:
        return got.get("error") == want["error"] and ("cause" not in want or got.get("cause") == want["cause"])
    return "output" in got and got["output"] == want["output"]


@mock_aws(config={"stepfunctions": {"execute_state_machine": True}})
def main(directory):
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    agree = documented = other = skipped = 0
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as f:
            case = json.load(f)
        if has_task(case["definition"]):
            skipped += 1
            continue
        name = os.path.basename(path)[:-5][:80]
        try:
            got = outcome(sfn, name, case)
        except Exception as e:  # moto refusing the definition is an outcome too
            got = {"error": "moto-refused", "cause": str(e)[:300]}
        if same(got, case["expect"]):
            agree += 1
            continue
        detail = f"  expected: {json.dumps(case['expect'])[:300]}\n  moto: {json.dumps(got)[:300]}"
        if case.get("moto_disagrees"):
            documented += 1
            print(f"DISAGREE (documented) {os.path.basename(path)}: {case['moto_disagrees']}\n{detail}")
        else:
            other += 1
            print(f"DISAGREE {os.path.basename(path)}: {case['description']}\n{detail}")
    print(f"moto crosscheck: {agree} agree, {documented} documented disagreements, "
          f"{other} other disagreements, {skipped} skipped (Task states need Lambda)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "testdata/conformance")
