// Runs the conformance corpus (testdata/conformance/*.json) through the npm
// engine aws-local-stepfunctions and compares each result with the expected
// one written from the AWS documentation, which the Go engine must match
// exactly (go test ./internal/asl). This is a second opinion, not the
// reference: where the npm engine is known to be wrong, the case carries a
// "node_disagrees" note and a disagreement there is reported, not fatal.
//
// Usage: node scripts/crosscheck.mjs [--verbose] [dir]   (Node >= 22)
// It prints each undocumented disagreement and a summary line; --verbose
// prints the documented ones too.
// Exit status: 0 when every disagreement is a documented one, 1 otherwise.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { StateMachine } from 'aws-local-stepfunctions';

const args = process.argv.slice(2);
const verbose = args.includes('--verbose');
const dir = args.find((a) => a !== '--verbose') ?? 'testdata/conformance';

class DeclaredError extends Error {
  constructor(name, cause) {
    super(cause);
    this.name = name;
  }
}

// Task handlers mirroring corpusRegistry in internal/asl/conformance_test.go.
function handlerFor(resource, stateName, flakyCalls) {
  const binding = resource.replace(/^\$\{/, '').replace(/Arn\}$/, '');
  switch (binding) {
    case 'EchoFunction':
      return (input) => input;
    case 'AddFunction':
      return (input) => input.A + input.B;
    case 'FailFunction':
      return (input) => { throw new DeclaredError(input.Error, input.Cause); };
    case 'FlakyFunction':
      return (input) => {
        const n = (flakyCalls.get(stateName) ?? 0) + 1;
        flakyCalls.set(stateName, n);
        if (n <= input.failTimes) throw new DeclaredError(input.error, 'flaky');
        return { attempts: n };
      };
    case 'SleepFunction':
      return (input) => new Promise((resolve) => setTimeout(() => resolve(input), input.Ms));
    default:
      return undefined;
  }
}

// Collects Task states at every nesting level (Parallel branches, Map processors).
function taskStates(states, out = []) {
  for (const [name, st] of Object.entries(states ?? {})) {
    if (st.Type === 'Task') out.push([name, st.Resource]);
    for (const b of st.Branches ?? []) taskStates(b.States, out);
    const proc = st.ItemProcessor ?? st.Iterator;
    if (proc) taskStates(proc.States, out);
  }
  return out;
}

// The npm engine's validator rejects the ${XFunctionArn} placeholders the
// project's definitions use, so they become plain Lambda ARNs here.
function withArns(def) {
  return JSON.parse(JSON.stringify(def), (key, value) =>
    key === 'Resource' && typeof value === 'string' && value.startsWith('${')
      ? `arn:aws:lambda:us-east-1:123456789012:function:${value.slice(2, -4)}`
      : value);
}

async function runCase(c) {
  const flaky = new Map();
  const handlers = {};
  for (const [name, res] of taskStates(c.definition.States)) {
    const h = handlerFor(res, name, flaky);
    if (h) handlers[name] = h;
  }
  const retryIntervalOverrides = {};
  for (const [name] of taskStates(c.definition.States)) retryIntervalOverrides[name] = 0;
  const sm = new StateMachine(withArns(c.definition), { validationOptions: { checkArn: false, checkPaths: false } });
  try {
    const exec = sm.run(c.input, { overrides: { taskResourceLocalHandlers: handlers, retryIntervalOverrides } });
    const output = await exec.result;
    return { output };
  } catch (err) {
    const inner = err.cause ?? err;
    return { error: inner.name, cause: inner.cause ?? inner.message };
  }
}

function sameResult(got, want) {
  if (want.error) return got.error === want.error && (want.cause === undefined || got.cause === want.cause);
  return got.error === undefined && isDeepStrictEqual(got.output, want.output);
}

const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
let agree = 0, documented = 0, undocumented = 0;
for (const f of files) {
  const c = JSON.parse(readFileSync(join(dir, f), 'utf8'));
  let got;
  try {
    got = await runCase(c);
  } catch (err) {
    got = { error: 'crosscheck-crash', cause: String(err) };
  }
  if (sameResult(got, c.expect)) {
    agree++;
    continue;
  }
  const detail = `  expected: ${JSON.stringify(c.expect)}\n  npm engine: ${JSON.stringify(got)}`;
  if (c.node_disagrees) {
    documented++;
    if (verbose) console.log(`DISAGREE (documented) ${f}: ${c.node_disagrees}\n${detail}`);
  } else {
    undocumented++;
    console.log(`DISAGREE ${f}: ${c.description}\n${detail}`);
  }
}
console.log(`crosscheck: ${files.length} cases, ${agree} agree, ${documented} documented disagreements${verbose ? '' : ' (--verbose lists them)'}, ${undocumented} undocumented`);
process.exit(undocumented === 0 ? 0 : 1);
