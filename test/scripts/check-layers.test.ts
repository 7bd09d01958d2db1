// The layering rule of scripts/check-layers.mjs, run by `npm run lint`: the repo keeps it, and a
// deliberate violation of each rule, dropped into a copy of the repo, makes `npm run lint` fail.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { checkLayers } from '../../scripts/check-layers.mjs';

const REPO = resolve(fileURLToPath(new URL('../../', import.meta.url)));
type Violation = { file: string; line: number; target: string; rule: string; why: string };

/** One deliberate violation per rule: the file, what it imports, and the rule that must refuse it. */
const BAD: [string, string, string[]][] = [
  ['main/engine/scheduler/zz-bad.ts', "import { startApi } from '../api/server.js';\nexport const x = startApi;\n", ['core imports no adapter']],
  ['main/engine/ops/zz-bad.ts', "export { followLog } from '../../../worker/jobdir/logs.js';\n", ['core imports no adapter', 'only the host wires backends']],
  ['main/engine/api/zz-bad.ts', "const m = () => import('../../../worker/local/local-backend.js');\nexport default m;\n", ['only the host wires backends']],
  ['renderer/src/zz-bad.ts', "import type {\n  RoutineDef,\n} from '../../main/engine/domain/types.js';\nexport type X = RoutineDef;\n", ['the renderer imports only the contract']],
  ['contract/zz-bad.ts', "import type { RoutineDef } from '../main/engine/domain/types.js';\nimport { parseDuration } from '../main/engine/timing/duration.js';\nexport type R = RoutineDef;\nexport const f = parseDuration;\n", ['the contract runs no engine code']],
  ['worker/local/zz-bad.ts', "import { Store } from '../../main/engine/store/store.js';\nexport const s = Store;\n", ['backends import only the port and the contract']],
];

let copy = '';
beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'tend-layers-'));
  for (const p of ['main', 'contract', 'worker', 'preload', 'renderer/src', 'scripts', 'package.json', '.oxlintrc.json']) cpSync(join(REPO, p), join(copy, p), { recursive: true });
  symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'));
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

describe('the layering rule', () => {
  it('holds on the repo as it is', () => {
    expect(checkLayers(REPO)).toEqual([]);
  });

  it('names each deliberate violation with its line and rule, and nothing else', () => {
    for (const [file, text] of BAD) writeFileSync(join(copy, file), text);
    const found = checkLayers(copy) as Violation[];
    expect(found.map((v) => `${v.file} ${v.rule}`).sort()).toEqual(BAD.flatMap(([f, , rules]) => rules.map((r) => `${f} ${r}`)).sort());
    expect(found.find((v) => v.file === 'renderer/src/zz-bad.ts')).toMatchObject({ line: 3, target: 'main/engine/domain/types.ts' });
    expect(found.find((v) => v.file === 'main/engine/scheduler/zz-bad.ts')).toMatchObject({ line: 1, target: 'main/engine/api/server.ts' });
    // Its type import is allowed; the code import on line 2 is not.
    expect(found.filter((v) => v.file === 'contract/zz-bad.ts').map((v) => v.line)).toEqual([2]);
  });

  it("the README's map names folders that exist", () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Architecture'), readme.indexOf('## Development'));
    const rows = section.split('\n').filter((l) => /^\| [a-z]/.test(l) && !l.startsWith('| layer'));
    expect(rows.length).toBeGreaterThanOrEqual(6);
    const paths = rows.flatMap((r) => [...r.split('|')[2]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
    const expanded = paths.flatMap((p) => {
      const b = /^(.*)\{([^}]+)\}(.*)$/.exec(p);
      return b ? b[2]!.split(',').map((x) => `${b[1]}${x}${b[3]}`) : [p];
    });
    expect(expanded.length).toBeGreaterThan(15);
    for (const p of expanded) expect(existsSync(join(REPO, p.startsWith('engine.ts') ? `main/engine/${p}` : p)), p).toBe(true);
  });

  it('makes `npm run lint` fail, saying which import crossed which boundary', () => {
    for (const [file, text] of BAD) writeFileSync(join(copy, file), text);
    const r = spawnSync('npm', ['run', 'lint', '--silent'], { cwd: copy, encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('main/engine/scheduler/zz-bad.ts:1: imports main/engine/api/server.ts: the core');
    expect(r.stderr).toContain(`layers: ${BAD.flatMap(([, , rules]) => rules).length} imports across a layer boundary`);
  });
});
