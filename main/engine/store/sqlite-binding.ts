// Which native better-sqlite3 this process loads. Under Node: the one npm built in node_modules
// (better-sqlite3's own lookup). Under Electron (the desktop app, and the CLI run by the app's
// runtime with ELECTRON_RUN_AS_NODE=1) that binary has Node's ABI and cannot load, so a second
// build for Electron's ABI is kept in its own folder (native/electron/, made by
// scripts/electron-sqlite.mjs; unpacked beside app.asar in a package), or named by
// TEND_SQLITE_BINDING. Loading it here, before opening, turns a missing or wrong binary into one
// clear message instead of better-sqlite3's ABI stack.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve, sep } from 'node:path';
import { appRoot } from '../app-root.js';
import { TendError, errorMessage } from '../errors.js';

/** Where the Electron build lives, relative to the app's root (the repository, or app.asar). */
export const ELECTRON_BINDING_DIR = join('native', 'electron');
export const BINDING_FILE = 'better_sqlite3.node';
/** What scripts/electron-sqlite.mjs writes next to the binary: what it was built for. */
export const STAMP_FILE = 'stamp.json';
/** The one command that builds it (package.json's script running scripts/electron-sqlite.mjs). */
export const BUILD_COMMAND = 'npm run electron:sqlite';

export interface BindingStamp {
  electron: string;
  abi: string;
  platform: string;
  arch: string;
  betterSqlite3: string;
}

export interface BindingContext {
  env: NodeJS.ProcessEnv;
  versions: NodeJS.ProcessVersions;
  /** The app's root: the directory holding Tend's package.json (app.asar when packaged). */
  root: string | null;
  platform?: string;
  arch?: string;
}

/** The Electron version this process runs under, or null under plain Node. */
export function electronVersion(versions: NodeJS.ProcessVersions = process.versions): string | null {
  return (versions as NodeJS.ProcessVersions & { electron?: string }).electron ?? null;
}

/** A path inside app.asar as the file system sees it: native modules are unpacked beside it. */
export function unpackedPath(path: string): string {
  return path.replace(`${sep}app.asar${sep}`, `${sep}app.asar.unpacked${sep}`);
}

/**
 * The binary to load, or null for better-sqlite3's own (Node). Throws, naming Electron and the
 * command that fixes it, when this is Electron and no usable build for its ABI is there.
 */
export function sqliteBindingPath(c: BindingContext): string | null {
  const electron = electronVersion(c.versions);
  if (!electron) return null;
  const abi = c.versions.modules;
  const explicit = c.env.TEND_SQLITE_BINDING;
  if (explicit) {
    const file = resolve(explicit);
    if (!existsSync(file)) throw new TendError('UNAVAILABLE', `TEND_SQLITE_BINDING: ${file} does not exist (it must name better-sqlite3's ${BINDING_FILE} built for Electron ${electron}, NODE_MODULE_VERSION ${abi})`);
    return file;
  }
  const dir = c.root ? unpackedPath(join(c.root, ELECTRON_BINDING_DIR)) : null;
  const file = dir ? join(dir, BINDING_FILE) : null;
  const fix = (verb: string) => `${verb} it with \`${BUILD_COMMAND}\` (it needs internet access once), or set TEND_SQLITE_BINDING to such a binary`;
  if (!file || !existsSync(file)) {
    throw new TendError(
      'UNAVAILABLE',
      `Tend runs under Electron ${electron}, which cannot load the SQLite module npm built for Node; ` +
        `it needs better-sqlite3 built for Electron (NODE_MODULE_VERSION ${abi}) at ${file ?? join('<app>', ELECTRON_BINDING_DIR, BINDING_FILE)}, which is missing: ${fix('build')}`,
    );
  }
  const stamp = readStamp(join(dir!, STAMP_FILE));
  const platform = c.platform ?? process.platform;
  const arch = c.arch ?? process.arch;
  if (!stamp || stamp.abi !== abi || stamp.platform !== platform || stamp.arch !== arch) {
    const built = stamp ? `Electron ${stamp.electron} (NODE_MODULE_VERSION ${stamp.abi}, ${stamp.platform}-${stamp.arch})` : 'an unknown runtime (no readable stamp.json)';
    throw new TendError('UNAVAILABLE', `Tend runs under Electron ${electron} (NODE_MODULE_VERSION ${abi}, ${platform}-${arch}), but ${file} was built for ${built}: ${fix('rebuild')}`);
  }
  return file;
}

function readStamp(file: string): BindingStamp | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as BindingStamp;
  } catch {
    return null;
  }
}

export { appRoot };

let loaded: string | null = null;

/**
 * better-sqlite3's `nativeBinding` for this process: undefined under Node, the Electron build's
 * path under Electron, loaded here first (once; require's cache makes better-sqlite3 reuse it) so
 * that a binary Electron refuses is reported as such, not as a database that cannot be opened.
 */
export function sqliteNativeBinding(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = sqliteBindingPath({ env, versions: process.versions, root: appRoot() });
  if (!file || loaded === file) return file ?? undefined;
  try {
    createRequire(import.meta.url)(file);
  } catch (err) {
    const first = errorMessage(err).split('\n')[0];
    throw new TendError('UNAVAILABLE', `Electron ${electronVersion()} cannot load the SQLite module ${file}: ${first}; rebuild it for this Electron with \`${BUILD_COMMAND}\` (or point TEND_SQLITE_BINDING at one)`);
  }
  loaded = file;
  return file;
}
