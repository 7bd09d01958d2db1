// `npm run bench mutation`: StrykerJS (stryker.config.mjs) mutates the core — timing/, lifecycle/,
// scheduler/, the store's compare-and-set — and runs its unit tests against every mutant; this
// reports the score per file (see mutation-score.ts for the import-failure correction). Slow (an
// hour and more on a loaded 2-core machine from scratch; incremental afterwards), so it runs only
// when named. TEND_BENCH_MUTATE=file[,file…] narrows it to some files.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scoreReport, type MutationReport } from './mutation-score.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function benchMutation() {
  const args = ['run'];
  const narrow = process.env.TEND_BENCH_MUTATE;
  if (narrow) args.push('--mutate', narrow);
  const t0 = Date.now();
  // Stryker's own output goes to stderr: stdout carries the bench JSON.
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/@stryker-mutator/core/bin/stryker.js'), ...args], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (r.status !== 0) throw new Error(`stryker exited ${r.status ?? r.signal}`);
  const report = JSON.parse(readFileSync(join(ROOT, 'reports/mutation/mutation.json'), 'utf8')) as MutationReport;
  const { files, total } = scoreReport(report);
  return {
    name: 'mutation',
    description: 'StrykerJS 9.6.1 (vitest runner) over the core; score = killed (incl. at import) and timed out / all counted mutants, per file',
    durationS: Math.round((Date.now() - t0) / 1000),
    narrowedTo: narrow ?? null,
    total,
    belowGoal: files.filter((f) => !f.meetsGoal).map((f) => `${f.file} ${f.score} < ${f.goal}`),
    files,
  };
}
