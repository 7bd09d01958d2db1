// The score per file of a Stryker mutation report (mutation-testing-report-schema JSON), with the
// one correction the vitest runner needs: a mutant that makes a module throw while it is imported
// (a lifecycle table that no longer passes `defineMachine`, a cron field table) fails every test
// file that loads it before a single test runs, and the runner reports that as "survived, 0 tests
// completed". Such a mutant was caught — by the import — so it counts as killed here, listed as
// `killedAtImport`. A survivor that some test did run (testsCompleted > 0) stays a survivor.
// Static mutants (stryker.config.mjs: ignoreStatic) are tested by hand in mutation-static.ts;
// those it caught are `killedStatic`, those it did not are survivors marked "(static)", and any
// it has not tested (Ignored, static) are `staticUnchecked` and not counted.

export interface ReportMutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  location: { start: { line: number; column: number }; end?: { line: number; column: number } };
  status: string;
  statusReason?: string;
  testsCompleted?: number;
  static?: boolean;
  /** Set by mutation-static.ts: the status is what its run by hand found. */
  checkedStatic?: boolean;
}

export interface MutationReport {
  files: Record<string, { mutants: ReportMutant[] }>;
}

export interface FileScore {
  file: string;
  /** Detected / (detected + undetected), in percent, one decimal. */
  score: number;
  goal: number;
  meetsGoal: boolean;
  killed: number;
  timedOut: number;
  killedAtImport: number;
  /** Static mutants that the run by hand (mutation-static.ts) caught, timeouts included. */
  killedStatic: number;
  /** Static mutants Stryker ignored and nothing has tested yet: not counted. */
  staticUnchecked: number;
  survived: number;
  noCoverage: number;
  /** CompileError, RuntimeError, Ignored: not counted, like Stryker's own score. */
  notCounted: number;
  /** `line:column mutator → replacement` of each mutant no test caught. */
  survivors: string[];
}

/** Per-file goals of issue 18: lifecycle/ and timing/ 95 %, the rest of the core 90 %. */
export function goalFor(file: string): number {
  return /(^|\/)engine\/(lifecycle|timing)\//.test(file) ? 95 : 90;
}

export function importFailure(m: ReportMutant): boolean {
  return m.status === 'Survived' && m.testsCompleted === 0 && m.checkedStatic !== true;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;

export function scoreFile(file: string, mutants: readonly ReportMutant[]): FileScore {
  const count = (pred: (m: ReportMutant) => boolean): number => mutants.filter(pred).length;
  const byHand = (m: ReportMutant): boolean => m.checkedStatic === true;
  const killed = count((m) => m.status === 'Killed' && !byHand(m));
  const timedOut = count((m) => m.status === 'Timeout' && !byHand(m));
  const killedStatic = count((m) => byHand(m) && (m.status === 'Killed' || m.status === 'Timeout'));
  const staticUnchecked = count((m) => m.status === 'Ignored' && m.static === true);
  const killedAtImport = count(importFailure);
  const undetected = mutants.filter((m) => (m.status === 'Survived' && !importFailure(m)) || m.status === 'NoCoverage');
  const noCoverage = count((m) => m.status === 'NoCoverage');
  const detected = killed + timedOut + killedAtImport + killedStatic;
  const valid = detected + undetected.length;
  const score = valid === 0 ? 100 : round1((100 * detected) / valid);
  const goal = goalFor(file);
  return {
    file,
    score,
    goal,
    meetsGoal: score >= goal,
    killed,
    timedOut,
    killedAtImport,
    killedStatic,
    staticUnchecked,
    survived: undetected.length - noCoverage,
    noCoverage,
    notCounted: mutants.length - valid,
    survivors: undetected
      .map((m) => `${m.location.start.line}:${m.location.start.column} ${m.mutatorName}${m.replacement === undefined ? '' : ` → ${m.replacement}`}${m.status === 'NoCoverage' ? ' (no coverage)' : ''}${byHand(m) ? ' (static)' : ''}`)
      .sort((a, b) => parseInt(a, 10) - parseInt(b, 10)),
  };
}

export function scoreReport(report: MutationReport): { files: FileScore[]; total: Omit<FileScore, 'file' | 'goal' | 'meetsGoal' | 'survivors'> } {
  const files = Object.entries(report.files)
    .map(([file, f]) => scoreFile(file, f.mutants))
    .sort((a, b) => a.file.localeCompare(b.file));
  const all = scoreFile('', Object.values(report.files).flatMap((f) => f.mutants));
  const { file: _f, goal: _g, meetsGoal: _m, survivors: _s, ...total } = all;
  return { files, total };
}
