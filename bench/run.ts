// `npm run bench [-- name…]`: run benchmarks, print JSON, write bench/results/latest.json.
// `npm run bench -- --check [name…]`: the same, then each figure of bench/baseline.json (of the
// benches that ran: by default, every bench it has figures of) is compared with this run's; any
// regression beyond its tolerance is named and the exit status is 1. `--record` instead writes
// this run's figures into the baseline as its values (tolerances and notes kept).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchesOf, checkResults, readBaseline, recorded, type Baseline } from './check.js';
import { benchCli } from './cli.js';
import { benchDaemon } from './daemon.js';
import { benchHistory } from './history.js';
import { benchJobs } from './jobs.js';
import { benchMutation } from './mutation.js';
import { benchPass } from './pass.js';
import { benchPool } from './pool.js';
import { benchRestart } from './restart.js';
import { benchSlurm } from './slurm.js';
import { benchUi } from './ui.js';

const BENCHES: Record<string, () => Promise<unknown>> = {
  pass: benchPass,
  idle: benchDaemon,
  cli: benchCli,
  pool: benchPool,
  slurm: benchSlurm,
  ui: benchUi,
  jobs: benchJobs,
  restart: benchRestart,
  mutation: benchMutation,
  history: benchHistory,
};
/** Run only when named: `mutation` takes an hour from scratch; `history` builds gigabytes of history. */
const ON_REQUEST = new Set(['mutation', 'history']);

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BASELINE = join(REPO, 'bench', 'baseline.json');

const args = process.argv.slice(2);
const OPTIONS = ['--check', '--record'];
const mode = OPTIONS.find((o) => args.includes(o)) ?? null;
const unknownOption = args.filter((a) => a.startsWith('-') && !OPTIONS.includes(a));
if (unknownOption.length || (mode && OPTIONS.every((o) => args.includes(o)))) {
  process.stderr.write(`${unknownOption.length ? `unknown option: ${unknownOption.join(', ')}` : '--check and --record exclude each other'} (have: ${OPTIONS.join(', ')})\n`);
  process.exit(2);
}
let baseline: Baseline | null = null;
if (mode) {
  try {
    baseline = readBaseline(BASELINE);
  } catch (err) {
    process.stderr.write(`bench ${mode}: ${(err as Error).message}\n`);
    process.exit(2);
  }
}
const named = args.filter((a) => !a.startsWith('-'));
const wanted = named.length || !baseline ? named : benchesOf(baseline);
const unknown = wanted.filter((w) => !BENCHES[w]);
if (unknown.length) {
  process.stderr.write(`unknown bench: ${unknown.join(', ')} (have: ${Object.keys(BENCHES).join(', ')})\n`);
  process.exit(2);
}
const results: unknown[] = [];
const ran = new Set<string>();
for (const [name, fn] of Object.entries(BENCHES)) {
  if (wanted.length ? !wanted.includes(name) : ON_REQUEST.has(name)) continue;
  process.stderr.write(`bench ${name}…\n`);
  results.push(await fn());
  ran.add(name);
}
const report = {
  at: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  results,
};
const root = join(REPO, 'bench', 'results');
mkdirSync(root, { recursive: true });
// Results of benches not run this time stay, so one file holds the latest of each.
const file = join(root, 'latest.json');
let kept: { name?: string }[] = [];
try {
  kept = (JSON.parse(readFileSync(file, 'utf8')) as { results?: { name?: string }[] }).results ?? [];
} catch {
  // First run, or a file from elsewhere: start afresh.
}
const fresh = new Set(results.map((r) => (r as { name?: string }).name));
writeFileSync(file, `${JSON.stringify({ ...report, results: [...kept.filter((r) => !fresh.has(r.name)), ...results] }, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
if (baseline && mode === '--record') {
  try {
    writeFileSync(BASELINE, `${JSON.stringify(recorded(baseline, results, ran, report.at), null, 2)}\n`);
    process.stderr.write(`bench --record: wrote ${BASELINE}; say in its notes what the machine was doing\n`);
  } catch (err) {
    process.stderr.write(`bench --record: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
} else if (baseline) {
  const findings = checkResults(results, baseline, ran);
  for (const f of findings) process.stderr.write(`${f.ok ? 'ok  ' : 'FAIL'} ${f.message}\n`);
  const failed = findings.filter((f) => !f.ok);
  process.stderr.write(`bench --check: ${failed.length ? `${failed.length} of ${findings.length} metrics regressed or missing` : `all ${findings.length} metrics within tolerance`} (baseline: ${BASELINE})\n`);
  if (failed.length) process.exitCode = 1;
}
