// `npm run bench mutation`: StrykerJS (stryker.config.mjs) mutates the core — timing/, lifecycle/,
// scheduler/, the store's compare-and-set — and runs its unit tests against every mutant; then the
// static mutants Stryker ignored (ignoreStatic) are tested by hand (mutation-static.ts); this
// reports the score per file (mutation-score.ts: what counts as killed). Slow (an hour and more on
// a loaded 2-core machine from scratch; incremental afterwards), so it runs only when named.
//   TEND_BENCH_MUTATE=file[,file…]  narrows it to some files (Stryker's --mutate; plain paths
//                                   also narrow what is scored, see narrowed());
//   TEND_BENCH_MUTATE_FORCE=1       re-runs every mutant (--force), not only the changed ones;
//   TEND_BENCH_MUTATE_REUSE=1       skips Stryker and scores its last report (static pass included).
// The report with the static outcomes written in: reports/mutation/mutation-static.json.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scoreReport, type MutationReport } from './mutation-score.js';
import { runStaticMutants, withOutcomes } from './mutation-static.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const REPORT = join(ROOT, 'reports/mutation/mutation.json');

/**
 * The report's files that were named, when TEND_BENCH_MUTATE names plain files: the rest of an
 * incremental report is what an earlier run left (its static mutants not even marked static, as
 * this run did not instrument them). Globs keep the whole report.
 */
export function narrowed(report: MutationReport, narrow: string | undefined): MutationReport {
  const named = (narrow ?? '').split(',').map((f) => f.trim()).filter(Boolean);
  if (named.length === 0 || named.some((f) => /[*?{[]/.test(f))) return report;
  return { ...report, files: Object.fromEntries(Object.entries(report.files).filter(([file]) => named.includes(file))) };
}

export async function benchMutation() {
  const narrow = process.env.TEND_BENCH_MUTATE;
  const t0 = Date.now();
  if (process.env.TEND_BENCH_MUTATE_REUSE !== '1') {
    const args = ['run'];
    if (narrow) args.push('--mutate', narrow);
    if (process.env.TEND_BENCH_MUTATE_FORCE === '1') args.push('--force');
    // Stryker's own output goes to stderr: stdout carries the bench JSON.
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/@stryker-mutator/core/bin/stryker.js'), ...args], { cwd: ROOT, stdio: ['ignore', 2, 2] });
    if (r.status !== 0) throw new Error(`stryker exited ${r.status ?? r.signal}`);
  }
  const stryker = narrowed(JSON.parse(readFileSync(REPORT, 'utf8')) as MutationReport, narrow);
  const strykerS = Math.round((Date.now() - t0) / 1000);
  const outcomes = await runStaticMutants(ROOT, stryker, (line) => process.stderr.write(`mutation static: ${line}\n`));
  const report = withOutcomes(stryker, outcomes);
  writeFileSync(join(ROOT, 'reports/mutation/mutation-static.json'), JSON.stringify(report));
  const { files, total } = scoreReport(report);
  return {
    name: 'mutation',
    description:
      'StrykerJS 9.6.1 (vitest runner) over the core, static mutants tested by hand; score = killed (incl. at import and static) and timed out / all counted mutants, per file',
    durationS: Math.round((Date.now() - t0) / 1000),
    strykerS,
    staticS: Math.round((Date.now() - t0) / 1000) - strykerS,
    narrowedTo: narrow ?? null,
    total,
    belowGoal: files.filter((f) => !f.meetsGoal).map((f) => `${f.file} ${f.score} < ${f.goal}`),
    files,
  };
}
