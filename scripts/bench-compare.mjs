// The Node half of `make bench-compare`: runs one workload written by
// internal/asl/aslbench (definition + input) through the npm engine
// aws-local-stepfunctions, as a library user would — the state machine is
// built once and warmed up with one run — for at least the given time, and
// prints {"runs", "seconds", "output"} as JSON on stdout.
//
// Usage: node scripts/bench-compare.mjs WORKLOAD.json MILLISECONDS
import { readFileSync } from 'node:fs';
import { StateMachine } from 'aws-local-stepfunctions';

const [file, ms] = process.argv.slice(2);
const w = JSON.parse(readFileSync(file, 'utf8'));

// The Task states of the Task chain are bound by name to an identity
// handler; the placeholder resource becomes a Lambda ARN the npm
// validator accepts.
const handlers = {};
const def = JSON.parse(JSON.stringify(w.definition), (key, value) =>
  key === 'Resource' && typeof value === 'string' && value.startsWith('${')
    ? `arn:aws:lambda:us-east-1:123456789012:function:${value.slice(2, -4)}`
    : value);
for (const [name, st] of Object.entries(def.States)) {
  if (st.Type === 'Task') handlers[name] = (input) => input;
}
const sm = new StateMachine(def, { validationOptions: { checkArn: false, checkPaths: false } });
const run = () => sm.run(w.input, { overrides: { taskResourceLocalHandlers: handlers } }).result;

const output = await run();
let runs = 0;
const start = process.hrtime.bigint();
const budget = BigInt(Number(ms)) * 1000000n;
while (runs === 0 || process.hrtime.bigint() - start < budget) {
  await run();
  runs++;
}
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
process.stdout.write(JSON.stringify({ runs, seconds, output }) + '\n');
