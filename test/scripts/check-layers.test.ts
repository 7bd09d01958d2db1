// The layering rule of scripts/check-layers.mjs, run by `npm run lint`: the repo keeps it, and a
// deliberate violation of each rule, dropped into a copy of the repo, makes `npm run lint` fail.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
  ['worker/local/zz-bad.ts', "import { Store } from '../../main/engine/store/store.js';\nexport const s = Store;\n", ['backends import only the port and the contract']],
];

let copy = '';
beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), 'tend-layers-'));
  for (const p of ['main', 'worker', 'preload', 'renderer/src', 'scripts', 'package.json', '.oxlintrc.json']) cpSync(join(REPO, p), join(copy, p), { recursive: true });
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
  });

  it('makes `npm run lint` fail, saying which import crossed which boundary', () => {
    for (const [file, text] of BAD) writeFileSync(join(copy, file), text);
    const r = spawnSync('npm', ['run', 'lint', '--silent'], { cwd: copy, encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('main/engine/scheduler/zz-bad.ts:1: imports main/engine/api/server.ts: the core');
    expect(r.stderr).toContain(`layers: ${BAD.flatMap(([, , rules]) => rules).length} imports across a layer boundary`);
  });
});
