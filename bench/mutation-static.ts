// The post-pass of `npm run bench mutation` for STATIC mutants: those whose code runs only while
// its module loads (a lifecycle table passed to defineMachine, a cron field table). Stryker cannot
// test them with the vitest runner: vitest keeps the un-mutated module in its cache, so a static
// mutant is misreported as survived (stryker-js #6209, #6144). stryker.config.mjs sets
// `ignoreStatic`, so Stryker reports them as Ignored (`static: true`), and this pass tests each by
// hand, one at a time:
//   1. refuse to start if a source file is dirty in git, or differs from the source in the report
//      (a stale report would put the replacement in the wrong place);
//   2. find the test files of vitest.mutation.config.ts (`vitest list`) that import the module,
//      directly or through other modules: a regex import graph over relative imports;
//   3. run those test files once unmutated: they must pass, or nothing could be concluded;
//   4. write the mutant into the source (the report's location + replacement), run the same test
//      files with vitest (that config, --bail 1; the tests of the module's own folder first, see
//      nearFirst), and restore the file byte for byte in a finally;
//      SIGINT/SIGTERM/SIGHUP and process exit restore it too. A test failing, or a module failing
//      to import, is `Killed`; all passing is `Survived`; a run still going after its time is `Timeout`.
// Survivors Stryker ran that are static too ("hybrid": also reached at run time) are retested the
// same way, since their load-time part ran un-mutated. The outcomes go back into the report as
// `checkedStatic: true` with the status found; mutation-score.ts counts them as `killedStatic`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import type { MutationReport, ReportMutant } from './mutation-score.js';

export interface Position {
  /** 1-based, as in mutation-testing-report-schema. */
  line: number;
  /** 1-based. */
  column: number;
}

export interface StaticOutcome {
  file: string;
  id: string;
  status: 'Killed' | 'Survived' | 'Timeout';
  /** The first failing test file, or why the run was cut. */
  reason: string;
}

/** The character offset of a report position (1-based line and column) in `source`. */
export function offsetOf(source: string, pos: Position): number {
  let offset = 0;
  for (let line = 1; line < pos.line; line++) {
    const nl = source.indexOf('\n', offset);
    if (nl < 0) throw new Error(`line ${pos.line} is past the end of the source (${line} lines)`);
    offset = nl + 1;
  }
  const end = source.indexOf('\n', offset);
  const lineLength = (end < 0 ? source.length : end) - offset;
  // A location may end just past the last character of its line (column = length + 1).
  if (pos.column < 1 || pos.column > lineLength + 1) throw new Error(`column ${pos.column} is outside line ${pos.line} (${lineLength} characters)`);
  return offset + pos.column - 1;
}

/** `source` with the text at `location` replaced by `replacement`. */
export function applyMutant(source: string, location: { start: Position; end: Position }, replacement: string): string {
  const start = offsetOf(source, location.start);
  const end = offsetOf(source, location.end);
  if (end < start) throw new Error(`location ends (${location.end.line}:${location.end.column}) before it starts (${location.start.line}:${location.start.column})`);
  return source.slice(0, start) + replacement + source.slice(end);
}

/** Ignored for being static (ignoreStatic), not for a `// Stryker disable` comment, which stays ignored. */
function ignoredAsStatic(m: ReportMutant): boolean {
  return m.status === 'Ignored' && (m.statusReason === undefined || m.statusReason.includes('ignoreStatic'));
}

/** Mutants this pass must test by hand: static ones Stryker ignored, and static survivors. */
export function staticCandidates(report: MutationReport): { file: string; mutant: ReportMutant }[] {
  return Object.entries(report.files).flatMap(([file, f]) =>
    f.mutants.filter((m) => m.static === true && (ignoredAsStatic(m) || m.status === 'Survived')).map((mutant) => ({ file, mutant })),
  );
}

/** The report with each outcome written into its mutant (`checkedStatic: true`); the input is left alone. */
export function withOutcomes(report: MutationReport, outcomes: readonly StaticOutcome[]): MutationReport {
  const byKey = new Map(outcomes.map((o) => [`${o.file}\0${o.id}`, o]));
  return {
    ...report,
    files: Object.fromEntries(
      Object.entries(report.files).map(([file, f]) => [
        file,
        {
          ...f,
          mutants: f.mutants.map((m) => {
            const o = byKey.get(`${file}\0${m.id}`);
            return o ? { ...m, status: o.status, statusReason: `static, tested by hand: ${o.reason}`, checkedStatic: true } : m;
          }),
        },
      ]),
    ),
  };
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** The relative module specifiers `source` imports or re-exports (static and dynamic). */
export function importsOf(source: string): string[] {
  return [...source.matchAll(IMPORT)].map((m) => m[1]!);
}

/** The repo-relative file a specifier of `from` names: `./x.js` is `x.ts` in the sources. */
export function resolveImport(from: string, specifier: string, exists: (file: string) => boolean): string | null {
  const base = posix.normalize(posix.join(posix.dirname(from), specifier));
  const stem = base.replace(/\.(js|mjs|cjs|ts)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, base, `${base}/index.ts`]) if (exists(candidate)) return candidate;
  return null;
}

/** The test files among `tests` that load `target`, directly or through the modules they import. */
export function testsImporting(target: string, tests: readonly string[], read: (file: string) => string | null): string[] {
  const exists = (f: string): boolean => read(f) !== null;
  const reaches = new Map<string, boolean>();
  const visit = (file: string, path: Set<string>): boolean => {
    if (file === target) return true;
    const known = reaches.get(file);
    if (known !== undefined) return known;
    if (path.has(file)) return false; // a cycle: whatever reaches target is found from its other end
    path.add(file);
    const src = read(file) ?? '';
    const hit = importsOf(src).some((s) => {
      const dep = resolveImport(file, s, exists);
      return dep !== null && !dep.startsWith('node_modules/') && visit(dep, path);
    });
    path.delete(file);
    reaches.set(file, hit);
    return hit;
  };
  return tests.filter((t) => visit(t, new Set()));
}

/** The test files vitest.mutation.config.ts runs, as vitest itself lists them. */
export function mutationTestFiles(root: string): string[] {
  const r = spawnSync(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'list', '--filesOnly', '--json', '--config', 'vitest.mutation.config.ts'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vitest list: exited ${r.status ?? r.signal}: ${r.stderr.trim()}`);
  return (JSON.parse(r.stdout) as { file: string }[]).map((t) => relative(root, t.file).split('\\').join('/')).sort();
}

/**
 * `related` in the order to run it: first the tests of the module's own folder (test/README.md:
 * main/engine/<folder>/ is tested in test/unit/<folder>/), which catch most mutants in a second or
 * two, then the rest. Only the order changes; a survivor has run every one of them.
 */
export function nearFirst(module: string, related: readonly string[]): string[][] {
  const folder = /^main\/engine\/([^/]+)\//.exec(module)?.[1];
  const near = folder === undefined ? [] : related.filter((t) => t.startsWith(`test/unit/${folder}/`));
  const rest = related.filter((t) => !near.includes(t));
  return [near, rest].filter((stage) => stage.length > 0);
}

interface Run {
  status: 'passed' | 'failed' | 'timeout';
  reason: string;
  ms: number;
}

let running: ReturnType<typeof spawn> | null = null;

function killGroup(child: ReturnType<typeof spawn>): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    child.kill('SIGKILL'); // the group is gone already
  }
}

function runTests(root: string, files: readonly string[], timeoutMs: number): Promise<Run> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'vitest.mutation.config.ts', '--bail', '1', '--reporter', 'dot', ...files], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      // Its own process group, so that a timeout or a signal ends vitest's workers with it: killing
      // vitest alone left a worker spinning in a mutant's endless loop.
      detached: true,
    });
    running = child;
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      running = null;
      const ms = Date.now() - t0;
      if (timedOut) return resolve({ status: 'timeout', reason: `still running after ${Math.round(timeoutMs / 1000)} s`, ms });
      const failing = /(?:FAIL|×|✗)\s+(\S+\.test\.ts)/.exec(out)?.[1] ?? /Error: .*/.exec(out)?.[0] ?? `vitest exited ${code}`;
      resolve(code === 0 ? { status: 'passed', reason: 'all tests passed', ms } : { status: 'failed', reason: failing, ms });
    });
  });
}

function gitDirty(root: string, file: string): boolean {
  const r = spawnSync('git', ['status', '--porcelain', '--', file], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git status ${file}: ${r.stderr.trim()}`);
  return r.stdout.trim() !== '';
}

/**
 * Tests each static mutant of `report` by hand (see the header). `root` is the repo; the report's
 * file names are relative to it. `log` hears progress.
 */
export async function runStaticMutants(root: string, report: MutationReport & { files: Record<string, { source?: string }> }, log: (line: string) => void): Promise<StaticOutcome[]> {
  const candidates = staticCandidates(report);
  const files = [...new Set(candidates.map((c) => c.file))];
  for (const file of files) {
    if (gitDirty(root, file)) throw new Error(`${file} has uncommitted changes: commit or stash them first (this pass writes mutants into it)`);
    const source = report.files[file]!.source;
    if (source !== undefined && source !== readFileSync(join(root, file), 'utf8')) throw new Error(`${file} changed since the Stryker report was written: run Stryker again`);
  }
  const tests = mutationTestFiles(root);
  const read = (f: string): string | null => (existsSync(join(root, f)) ? readFileSync(join(root, f), 'utf8') : null);

  // The file being mutated and its original bytes, for the restore on a signal or an exit.
  let current: { path: string; original: Buffer } | null = null;
  const restore = (): void => {
    if (current) writeFileSync(current.path, current.original);
    current = null;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (running) killGroup(running);
    restore();
    process.stderr.write(`mutation static pass: ${signal}, source restored\n`);
    process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1));
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, onSignal);
  process.on('exit', restore);

  const outcomes: StaticOutcome[] = [];
  try {
    for (const file of files) {
      const path = join(root, file);
      const original = readFileSync(path);
      const source = original.toString('utf8');
      const related = testsImporting(file, tests, read);
      const mine = candidates.filter((c) => c.file === file);
      if (related.length === 0) {
        throw new Error(`${file}: no test file of vitest.mutation.config.ts imports it, so its ${mine.length} static mutants cannot be tested`);
      }
      const clean = await runTests(root, related, 10 * 60_000);
      if (clean.status !== 'passed') throw new Error(`${file}: its ${related.length} test files fail unmutated (${clean.reason}); nothing can be concluded`);
      const timeoutMs = Math.max(30_000, clean.ms * 3);
      log(`${file}: ${mine.length} static mutants, ${related.length} test files (${Math.round(clean.ms / 1000)} s unmutated)`);
      for (const { mutant } of mine) {
        if (!mutant.location.end || mutant.replacement === undefined) throw new Error(`${file} mutant ${mutant.id}: the report has no end location or replacement`);
        const mutated = applyMutant(source, { start: mutant.location.start, end: mutant.location.end }, mutant.replacement);
        current = { path, original };
        let run: Run = { status: 'passed', reason: 'all tests passed', ms: 0 };
        try {
          writeFileSync(path, mutated);
          for (const stage of nearFirst(file, related)) {
            const r = await runTests(root, stage, timeoutMs);
            run = { ...r, ms: run.ms + r.ms };
            if (r.status !== 'passed') break;
          }
        } finally {
          restore();
        }
        const status = run.status === 'passed' ? 'Survived' : run.status === 'timeout' ? 'Timeout' : 'Killed';
        outcomes.push({ file, id: mutant.id, status, reason: run.reason });
        log(`  ${mutant.location.start.line}:${mutant.location.start.column} ${mutant.mutatorName} → ${status} (${run.reason}, ${Math.round(run.ms / 1000)} s)`);
      }
      if (!readFileSync(path).equals(original)) throw new Error(`${file} was not restored byte for byte`);
    }
  } finally {
    restore();
    for (const s of signals) process.off(s, onSignal);
    process.off('exit', restore);
  }
  return outcomes;
}
