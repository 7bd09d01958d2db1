// The static-mutant pass of the mutation bench (bench/mutation-static.ts): where a mutant goes in
// the source, which mutants it tests, which test files load a module, and how its outcomes score.
import { readFileSync, existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scoreFile, type MutationReport, type ReportMutant } from '../../bench/mutation-score.js';
import { applyMutant, importsOf, nearFirst, offsetOf, resolveImport, staticCandidates, testsImporting, withOutcomes } from '../../bench/mutation-static.js';

const at = (line: number, column: number) => ({ line, column });

describe('applying a mutant at its report location', () => {
  const source = "const A = ['x', 'y'];\nexport const T = defineMachine({\n  a: { go: 'b' },\n});\n";

  it('replaces exactly the text between start and end (1-based line and column, end exclusive)', () => {
    expect(applyMutant(source, { start: at(1, 11), end: at(1, 21) }, '[]')).toBe("const A = [];\nexport const T = defineMachine({\n  a: { go: 'b' },\n});\n");
    expect(applyMutant(source, { start: at(3, 12), end: at(3, 15) }, '""')).toBe("const A = ['x', 'y'];\nexport const T = defineMachine({\n  a: { go: \"\" },\n});\n");
  });

  it('spans lines: an object literal replaced by {}', () => {
    expect(applyMutant(source, { start: at(2, 32), end: at(4, 2) }, '{}')).toBe("const A = ['x', 'y'];\nexport const T = defineMachine({});\n");
  });

  it('an end just past the last character of its line is the line end', () => {
    expect(offsetOf(source, at(1, 22))).toBe(21);
    expect(source[offsetOf(source, at(2, 1))]).toBe('e');
  });

  it('a position outside the source is refused, naming it, rather than mutating the wrong text', () => {
    expect(() => offsetOf(source, at(9, 1))).toThrow(/line 9 is past the end/);
    expect(() => offsetOf(source, at(1, 40))).toThrow(/column 40 is outside line 1 \(21 characters\)/);
    expect(() => offsetOf(source, at(1, 0))).toThrow(/column 0/);
    expect(() => applyMutant(source, { start: at(2, 5), end: at(1, 3) }, 'x')).toThrow(/ends \(1:3\) before it starts \(2:5\)/);
  });
});

let seq = 0;
function mutant(status: string, o: Partial<ReportMutant> = {}): ReportMutant {
  seq++;
  return { id: String(seq), mutatorName: 'StringLiteral', replacement: '""', location: { start: at(seq, 3), end: at(seq, 6) }, status, ...o };
}

describe('static mutants: which are tested by hand, and how they score', () => {
  it('the static mutants Stryker ignored, and static survivors (their load-time part ran un-mutated), are tested; the rest, and mutants disabled by a comment, are not', () => {
    const ignored = mutant('Ignored', { static: true, statusReason: 'Static mutant (and "ignoreStatic" was enabled)' });
    const hybridSurvivor = mutant('Survived', { static: true, testsCompleted: 4 });
    const report: MutationReport = {
      files: {
        'a.ts': { mutants: [ignored, mutant('Killed', { static: true }), mutant('Ignored'), mutant('Survived', { testsCompleted: 2 })] },
        'b.ts': { mutants: [hybridSurvivor, mutant('Timeout', { static: true }), mutant('Ignored', { static: true, statusReason: 'Ignored because of excluded mutation "StringLiteral"' })] },
      },
    };
    expect(staticCandidates(report)).toEqual([
      { file: 'a.ts', mutant: ignored },
      { file: 'b.ts', mutant: hybridSurvivor },
    ]);
  });

  it('outcomes go into their mutants (file and id both match); killed and timed-out ones count as killedStatic, survivors are listed as static', () => {
    const [k, s, t, u] = [mutant('Ignored', { static: true }), mutant('Ignored', { static: true }), mutant('Ignored', { static: true }), mutant('Ignored', { static: true })];
    const report: MutationReport = { files: { 'lifecycle/x.ts': { mutants: [k!, s!, t!, u!, mutant('Killed')] }, 'other.ts': { mutants: [{ ...k!, status: 'Ignored' }] } } };
    const merged = withOutcomes(report, [
      { file: 'lifecycle/x.ts', id: k!.id, status: 'Killed', reason: 'test/unit/lifecycle/machines.test.ts' },
      { file: 'lifecycle/x.ts', id: s!.id, status: 'Survived', reason: 'all tests passed' },
      { file: 'lifecycle/x.ts', id: t!.id, status: 'Timeout', reason: 'still running after 30 s' },
    ]);
    expect(report.files['lifecycle/x.ts']!.mutants[0]!.status).toBe('Ignored'); // the input is left alone
    expect(merged.files['other.ts']!.mutants[0]!.status).toBe('Ignored');
    expect(merged.files['lifecycle/x.ts']!.mutants[0]).toMatchObject({ status: 'Killed', checkedStatic: true, statusReason: 'static, tested by hand: test/unit/lifecycle/machines.test.ts' });
    const score = scoreFile('lifecycle/x.ts', merged.files['lifecycle/x.ts']!.mutants);
    expect(score).toMatchObject({ killed: 1, killedStatic: 2, timedOut: 0, survived: 1, staticUnchecked: 1, notCounted: 1, score: 75 });
    expect(score.survivors).toEqual([`${s!.location.start.line}:3 StringLiteral → "" (static)`]);
  });

  it('a static mutant tested by hand that survived with no test completed is a survivor, not "killed at import"', () => {
    const m = { ...mutant('Survived', { static: true, testsCompleted: 0 }), checkedStatic: true };
    expect(scoreFile('t.ts', [m])).toMatchObject({ killedAtImport: 0, survived: 1, score: 0 });
  });
});

describe('which test files load a module', () => {
  it('finds relative imports, re-exports, side-effect and dynamic imports, not packages', () => {
    const src = "import { a } from './a.js';\nimport type { B } from \"../b.js\";\nexport * from './c.js';\nimport './d.js';\nconst e = await import('./e.js');\nimport { z } from 'zod';\nimport x from 'node:fs';";
    expect(importsOf(src)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js']);
  });

  it('a .js specifier names the .ts source; a folder names its index.ts', () => {
    const files = new Set(['main/x/y.ts', 'main/z/index.ts']);
    const exists = (f: string) => files.has(f);
    expect(resolveImport('main/x/a.ts', './y.js', exists)).toBe('main/x/y.ts');
    expect(resolveImport('main/x/a.ts', '../z', exists)).toBe('main/z/index.ts');
    expect(resolveImport('main/x/a.ts', './missing.js', exists)).toBeNull();
  });

  it('a test file counts when it reaches the module through other modules, and import cycles end', () => {
    const tree: Record<string, string> = {
      'test/a.test.ts': "import '../src/index.js';",
      'test/b.test.ts': "import '../src/other.js';",
      'test/c.test.ts': "import '../src/loop1.js';",
      'src/index.ts': "export * from './table.js';",
      'src/table.ts': "import { m } from './machine.js';",
      'src/machine.ts': '',
      'src/other.ts': "import './machine.js';",
      'src/loop1.ts': "import './loop2.js';",
      'src/loop2.ts': "import './loop1.js'; import './table.js';",
    };
    const read = (f: string) => tree[f] ?? null;
    const tests = ['test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts'];
    expect(testsImporting('src/table.ts', tests, read)).toEqual(['test/a.test.ts', 'test/c.test.ts']);
    expect(testsImporting('src/machine.ts', tests, read)).toEqual(tests);
    expect(testsImporting('src/other.ts', tests, read)).toEqual(['test/b.test.ts']);
  });

  it('over the real sources, the lifecycle tests load the batch-run table and the cron tests do not', () => {
    const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : null);
    const found = testsImporting('main/engine/lifecycle/batch-run.ts', ['test/unit/lifecycle/machines.test.ts', 'test/unit/timing/cron.test.ts', 'test/unit/scheduler/fire.test.ts'], read);
    expect(found).toEqual(['test/unit/lifecycle/machines.test.ts', 'test/unit/scheduler/fire.test.ts']);
  });
});

describe('the order the test files run in', () => {
  it("the tests of the module's own folder run first, then every other test file that loads it; none is dropped", () => {
    const related = ['test/cli/next-command.test.ts', 'test/unit/lifecycle/machines.test.ts', 'test/unit/scheduler/fire.test.ts', 'test/unit/lifecycle/define.test.ts'];
    expect(nearFirst('main/engine/lifecycle/batch-run.ts', related)).toEqual([
      ['test/unit/lifecycle/machines.test.ts', 'test/unit/lifecycle/define.test.ts'],
      ['test/cli/next-command.test.ts', 'test/unit/scheduler/fire.test.ts'],
    ]);
    expect(nearFirst('main/engine/store/cas.ts', related)).toEqual([related]);
    expect(nearFirst('main/engine/lifecycle/machine.ts', ['test/unit/lifecycle/define.test.ts'])).toEqual([['test/unit/lifecycle/define.test.ts']]);
  });
});
