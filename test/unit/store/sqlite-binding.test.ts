// Which better-sqlite3 binary a process loads: Node's own under Node; under Electron the build
// for Electron's ABI in native/electron/ (unpacked beside app.asar in a package), or
// TEND_SQLITE_BINDING; a clear refusal otherwise. Real files in a scratch root.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appRoot, sqliteBindingPath, unpackedPath, type BindingContext } from '../../../main/engine/store/sqlite-binding.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
function root(): string {
  const r = mkdtempSync(join(tmpdir(), 'tend-binding-'));
  roots.push(r);
  return r;
}
const electron = { ...process.versions, electron: '45.5.0', modules: '150' } as NodeJS.ProcessVersions;
const ctx = (r: string | null, env: NodeJS.ProcessEnv = {}, versions = electron): BindingContext => ({ env, versions, root: r, platform: 'linux', arch: 'x64' });
function build(r: string, stamp: object | null) {
  const dir = join(r, 'native', 'electron');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'better_sqlite3.node'), 'binary');
  if (stamp) writeFileSync(join(dir, 'stamp.json'), JSON.stringify(stamp));
  return join(dir, 'better_sqlite3.node');
}
const good = { electron: '45.5.0', abi: '150', platform: 'linux', arch: 'x64', betterSqlite3: '12.11.1' };

describe('sqliteBindingPath', () => {
  it("under Node: better-sqlite3's own binary, whatever TEND_SQLITE_BINDING says", () => {
    const versions = { ...process.versions } as NodeJS.ProcessVersions;
    delete (versions as { electron?: string }).electron;
    expect(sqliteBindingPath(ctx(root(), { TEND_SQLITE_BINDING: '/somewhere/x.node' }, versions))).toBeNull();
  });

  it("under Electron: the build in native/electron/ when its stamp matches this Electron's ABI", () => {
    const r = root();
    const file = build(r, good);
    expect(sqliteBindingPath(ctx(r))).toBe(file);
  });

  it('under Electron without it: refuses, naming Electron, the ABI, the path and the command', () => {
    const r = root();
    expect(() => sqliteBindingPath(ctx(r))).toThrow(
      `Tend runs under Electron 45.5.0, which cannot load the SQLite module npm built for Node; it needs better-sqlite3 built for Electron (NODE_MODULE_VERSION 150) at ${join(r, 'native', 'electron', 'better_sqlite3.node')}, which is missing: build it with \`npm run electron:sqlite\` (it needs internet access once), or set TEND_SQLITE_BINDING to such a binary`,
    );
  });

  it('a build for another Electron, platform or arch, or without a stamp, is refused with what it was built for', () => {
    const r = root();
    build(r, { ...good, electron: '44.0.0', abi: '140' });
    expect(() => sqliteBindingPath(ctx(r))).toThrow(/but .*better_sqlite3\.node was built for Electron 44\.0\.0 \(NODE_MODULE_VERSION 140, linux-x64\): rebuild it with `npm run electron:sqlite`/);
    build(r, { ...good, arch: 'arm64' });
    expect(() => sqliteBindingPath(ctx(r))).toThrow(/built for Electron 45\.5\.0 \(NODE_MODULE_VERSION 150, linux-arm64\)/);
    rmSync(join(r, 'native', 'electron', 'stamp.json'));
    expect(() => sqliteBindingPath(ctx(r))).toThrow(/built for an unknown runtime \(no readable stamp\.json\)/);
  });

  it('TEND_SQLITE_BINDING wins under Electron, and must exist', () => {
    const r = root();
    build(r, good);
    const other = join(r, 'elsewhere.node');
    expect(() => sqliteBindingPath(ctx(r, { TEND_SQLITE_BINDING: other }))).toThrow(`TEND_SQLITE_BINDING: ${other} does not exist`);
    writeFileSync(other, 'binary');
    expect(sqliteBindingPath(ctx(r, { TEND_SQLITE_BINDING: other }))).toBe(other);
  });

  it('in a package, the build is looked for unpacked beside app.asar', () => {
    const r = root();
    const asar = join(r, 'resources', 'app.asar');
    build(join(r, 'resources', 'app.asar.unpacked'), good);
    expect(sqliteBindingPath(ctx(asar))).toBe(join(r, 'resources', 'app.asar.unpacked', 'native', 'electron', 'better_sqlite3.node'));
    expect(unpackedPath('/opt/Tend/resources/app.asar/native/electron/x.node')).toBe('/opt/Tend/resources/app.asar.unpacked/native/electron/x.node');
    expect(unpackedPath('/repo/native/electron/x.node')).toBe('/repo/native/electron/x.node');
  });

  it("appRoot finds Tend's package.json above a module", () => {
    const r = root();
    writeFileSync(join(r, 'package.json'), JSON.stringify({ name: 'tend' }));
    mkdirSync(join(r, 'dist', 'main', 'engine', 'store'), { recursive: true });
    expect(appRoot(join(r, 'dist', 'main', 'engine', 'store'))).toBe(r);
  });
});
