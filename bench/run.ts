// `npm run bench [-- name…]`: run benchmarks, print JSON, write bench/results/latest.json.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !BENCHES[w]);
if (unknown.length) {
  process.stderr.write(`unknown bench: ${unknown.join(', ')} (have: ${Object.keys(BENCHES).join(', ')})\n`);
  process.exit(2);
}
const results: unknown[] = [];
for (const [name, fn] of Object.entries(BENCHES)) {
  if (wanted.length ? !wanted.includes(name) : ON_REQUEST.has(name)) continue;
  process.stderr.write(`bench ${name}…\n`);
  results.push(await fn());
}
const report = {
  at: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  results,
};
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results');
mkdirSync(root, { recursive: true });
// Results of benches not run this time stay, so one file holds the latest of each.
const file = join(root, 'latest.json');
let kept: { name?: string }[] = [];
try {
  kept = (JSON.parse(readFileSync(file, 'utf8')) as { results?: { name?: string }[] }).results ?? [];
} catch {
  // First run, or a file from elsewhere: start afresh.
}
const ran = new Set(results.map((r) => (r as { name?: string }).name));
writeFileSync(file, `${JSON.stringify({ ...report, results: [...kept.filter((r) => !ran.has(r.name)), ...results] }, null, 2)}\n`);
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
