// The score per file of a Stryker mutation report (mutation-testing-report-schema JSON), with the
// one correction the vitest runner needs: a mutant that makes a module throw while it is imported
// (a lifecycle table that no longer passes `defineMachine`, a cron field table) fails every test
// file that loads it before a single test runs, and the runner reports that as "survived, 0 tests
// completed". Such a mutant was caught — by the import — so it counts as killed here, listed as
// `killedAtImport`. A survivor that some test did run (testsCompleted > 0) stays a survivor.

export interface ReportMutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  location: { start: { line: number; column: number } };
  status: string;
  testsCompleted?: number;
  static?: boolean;
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
  return m.status === 'Survived' && m.testsCompleted === 0;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;

export function scoreFile(file: string, mutants: readonly ReportMutant[]): FileScore {
  const count = (pred: (m: ReportMutant) => boolean): number => mutants.filter(pred).length;
  const killed = count((m) => m.status === 'Killed');
  const timedOut = count((m) => m.status === 'Timeout');
  const killedAtImport = count(importFailure);
  const undetected = mutants.filter((m) => (m.status === 'Survived' && !importFailure(m)) || m.status === 'NoCoverage');
  const noCoverage = count((m) => m.status === 'NoCoverage');
  const detected = killed + timedOut + killedAtImport;
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
    survived: undetected.length - noCoverage,
    noCoverage,
    notCounted: mutants.length - valid,
    survivors: undetected
      .map((m) => `${m.location.start.line}:${m.location.start.column} ${m.mutatorName}${m.replacement === undefined ? '' : ` → ${m.replacement}`}${m.status === 'NoCoverage' ? ' (no coverage)' : ''}`)
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
