"""Informational: every operation of botocore's Step Functions model, with
its required members only, against `veredicto serve` and moto_server; prints
a Markdown row per operation with the error code each answers (OK: none).

  veredicto serve --data D --addr 127.0.0.1:18765 &
  moto_server -H 127.0.0.1 -p 18766 &
  eval "$(veredicto credentials --operator --data D)"
  python3 scripts/sfn-moto-compare.py "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY"
"""
import json, boto3, botocore, sys
ops = json.load(open('internal/sfnapi/testdata/operations.json'))['operations']
arn = "arn:aws:states:us-east-1:000000000000:"
vals = {"name": "cli-ops", "definition": '{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}',
 "roleArn": "arn:aws:iam::000000000000:role/x", "stateMachineArn": arn+"stateMachine:Missing", "resourceArn": arn+"stateMachine:Missing",
 "executionArn": arn+"execution:Missing:x", "activityArn": arn+"activity:missing", "mapRunArn": arn+"mapRun:Missing/m:x",
 "stateMachineAliasArn": arn+"stateMachine:Missing:live", "stateMachineVersionArn": arn+"stateMachine:Missing:1",
 "taskToken": "not-a-token", "output": "{}", "tags": [{"key":"k","value":"v"}], "tagKeys": ["k"],
 "routingConfiguration": [{"stateMachineVersionArn": arn+"stateMachine:Missing:1", "weight": 100}]}
cfg = botocore.config.Config(inject_host_prefix=False, retries={"max_attempts": 1}, read_timeout=5)
def client(ep, key, secret):
    return boto3.client("stepfunctions", endpoint_url=ep, region_name="us-east-1", aws_access_key_id=key, aws_secret_access_key=secret, config=cfg)
serve = client("http://127.0.0.1:18765", sys.argv[1], sys.argv[2])
moto = client("http://127.0.0.1:18766", "test", "test")
import re
def py(n): return re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', n).lower()
rows=[]
for o in ops:
    inp = {m: vals[m] for m in o["required"]}
    out=[]
    for c in (serve, moto):
        try:
            getattr(c, py(o["name"]))(**inp); out.append("OK")
        except botocore.exceptions.ClientError as e:
            status = e.response["ResponseMetadata"]["HTTPStatusCode"]
            out.append("HTTP %d" % status if status >= 500 else e.response["Error"]["Code"])
        except Exception as e:
            out.append(type(e).__name__)
    rows.append((o["name"], out[0], out[1]))
for r in rows: print("| %s | %s | %s |" % r)
