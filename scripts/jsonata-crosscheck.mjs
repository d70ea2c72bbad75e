// Evaluates the JSONata corpus (internal/asl/jsonata/testdata/corpus.json)
// with the reference implementation, jsonata@2.0.6 from npm, and compares
// each outcome with the recorded one in testdata/expected.json, which the Go
// evaluator is tested against (go test ./internal/asl/jsonata). With --write
// it records the reference's outcomes instead (make jsonata-expected).
//
// An outcome is {"result": value}, {"undefined": true}, {"function": true}
// or {"error": code}.
//
// Usage: node scripts/jsonata-crosscheck.mjs [--write] [dir]
// Exit status: 0 when the recorded file matches the reference, 1 otherwise.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import jsonata from 'jsonata';

const args = process.argv.slice(2);
const write = args.includes('--write');
const dir = args.find((a) => !a.startsWith('--')) ?? 'internal/asl/jsonata/testdata';

const corpus = JSON.parse(readFileSync(join(dir, 'corpus.json'), 'utf8'));

async function outcome(c) {
  try {
    const expr = jsonata(c.expr);
    const result = await expr.evaluate(c.input, c.bindings ?? {});
    if (result === undefined) return { undefined: true };
    if (typeof result === 'function' || result?._jsonata_lambda || result?._jsonata_function) {
      return { function: true };
    }
    return { result: JSON.parse(JSON.stringify(result)) };
  } catch (err) {
    return { error: err.code ?? String(err.message ?? err) };
  }
}

const outcomes = [];
for (const c of corpus) {
  outcomes.push({ name: c.name, expr: c.expr, ...(await outcome(c)) });
}

const expectedPath = join(dir, 'expected.json');
if (write) {
  writeFileSync(expectedPath, JSON.stringify(outcomes, null, 1) + '\n');
  console.log(`wrote ${outcomes.length} outcomes to ${expectedPath}`);
  process.exit(0);
}

let recorded;
try {
  recorded = JSON.parse(readFileSync(expectedPath, 'utf8'));
} catch (err) {
  console.error(`cannot read ${expectedPath}: ${err.message}; run make jsonata-expected`);
  process.exit(1);
}
let stale = 0;
if (recorded.length !== outcomes.length) {
  console.error(`${expectedPath} has ${recorded.length} outcomes, the corpus ${outcomes.length} cases`);
  stale++;
}
for (let i = 0; i < Math.min(recorded.length, outcomes.length); i++) {
  if (!isDeepStrictEqual(recorded[i], outcomes[i])) {
    console.error(`case ${i} (${outcomes[i].name}): recorded ${JSON.stringify(recorded[i])}, reference gives ${JSON.stringify(outcomes[i])}`);
    stale++;
  }
}
if (stale > 0) {
  console.error(`${stale} recorded outcomes are stale; run make jsonata-expected`);
  process.exit(1);
}
console.log(`jsonata crosscheck: ${outcomes.length} recorded outcomes match jsonata@2.0.6`);
