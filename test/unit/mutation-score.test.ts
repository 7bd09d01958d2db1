// The mutation bench's score (bench/mutation-score.ts): a mutant that broke the import counts as
// killed; survivors some test ran, and mutants no test covers, count against the file.
import { describe, expect, it } from 'vitest';
import { narrowed } from '../../bench/mutation.js';
import { goalFor, scoreFile, scoreReport, type ReportMutant } from '../../bench/mutation-score.js';

let seq = 0;
function mutant(status: string, o: Partial<ReportMutant> = {}): ReportMutant {
  seq++;
  return { id: String(seq), mutatorName: 'ConditionalExpression', replacement: 'true', location: { start: { line: seq, column: 3 } }, status, ...o };
}

describe('mutation score', () => {
  it('a survivor that ran no test (its module failed to import) counts as killed at import', () => {
    const s = scoreFile('main/engine/lifecycle/batch-run.ts', [mutant('Killed', { testsCompleted: 3 }), mutant('Survived', { testsCompleted: 0, static: true })]);
    expect(s).toMatchObject({ score: 100, killed: 1, killedAtImport: 1, survived: 0, survivors: [] });
  });

  it('a survivor some test ran, and an uncovered mutant, count against the file and are listed', () => {
    const s = scoreFile('main/engine/scheduler/fire.ts', [
      mutant('Killed'),
      mutant('Timeout'),
      mutant('Killed'),
      mutant('Survived', { testsCompleted: 4, location: { start: { line: 54, column: 7 } } }),
      mutant('NoCoverage', { mutatorName: 'BlockStatement', replacement: '{}', location: { start: { line: 9, column: 1 } } }),
      mutant('CompileError'),
      mutant('RuntimeError'),
    ]);
    expect(s).toMatchObject({ score: 60, killed: 2, timedOut: 1, survived: 1, noCoverage: 1, notCounted: 2, goal: 90, meetsGoal: false });
    expect(s.survivors).toEqual(['9:1 BlockStatement → {} (no coverage)', '54:7 ConditionalExpression → true']);
  });

  it('the goal is 95 % for lifecycle/ and timing/, 90 % for the rest of the core', () => {
    expect(goalFor('main/engine/timing/cron.ts')).toBe(95);
    expect(goalFor('main/engine/lifecycle/machine.ts')).toBe(95);
    expect(goalFor('main/engine/scheduler/fire.ts')).toBe(90);
    expect(goalFor('main/engine/store/cas.ts')).toBe(90);
    expect(scoreFile('main/engine/timing/at.ts', [...Array(19)].map(() => mutant('Killed')).concat(mutant('Survived', { testsCompleted: 1 }))).meetsGoal).toBe(true);
  });

  it('a report gives one score per file, sorted, and the total over all of them', () => {
    const r = scoreReport({ files: { 'b.ts': { mutants: [mutant('Killed'), mutant('Survived', { testsCompleted: 2 })] }, 'a.ts': { mutants: [mutant('Killed')] } } });
    expect(r.files.map((f) => [f.file, f.score])).toEqual([
      ['a.ts', 100],
      ['b.ts', 50],
    ]);
    expect(r.total).toMatchObject({ score: 66.7, killed: 2, survived: 1 });
  });
});

describe('a narrowed mutation run', () => {
  const report = { files: { 'main/engine/a.ts': { mutants: [] }, 'main/engine/b.ts': { mutants: [] }, 'main/engine/c.ts': { mutants: [] } } };

  it('scores only the files it named, not what an earlier incremental run left in the report', () => {
    expect(Object.keys(narrowed(report, 'main/engine/a.ts, main/engine/c.ts').files)).toEqual(['main/engine/a.ts', 'main/engine/c.ts']);
  });

  it('a glob, or no narrowing, keeps the whole report', () => {
    expect(Object.keys(narrowed(report, 'main/engine/*.ts').files)).toHaveLength(3);
    expect(Object.keys(narrowed(report, undefined).files)).toHaveLength(3);
  });
});
