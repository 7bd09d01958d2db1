// Shared CLI plumbing: opening the data dir, printing, and turning errors into exit codes.
// Kept free of heavy imports: every command loads only what it needs.
import type { Settings } from '../engine/settings.js';
import type { Store } from '../engine/store/store.js';
import { BUSY_TIMEOUT_MS, busyError, isBusy } from '../engine/store/busy.js';

export interface GlobalOpts {
  json?: boolean;
}

/** Exit 2 for bad input (one line per problem), 1 for everything else that failed. */
export function fail(err: unknown): void {
  // A single write outside a transaction that still met a lock after busy_timeout: say who held it.
  if (isBusy(err)) err = busyError(openedDb ?? 'tend.db', BUSY_TIMEOUT_MS);
  const e = err as { name?: string; code?: string; message?: string; issues?: { path: string; message: string }[] };
  if (e?.name === 'TendError' && e.code === 'INVALID') {
    const issues = e.issues?.length ? e.issues : [{ path: '', message: e.message ?? 'invalid input' }];
    for (const i of issues) process.stderr.write(`tend: ${i.path ? `${i.path}: ` : ''}${i.message}\n`);
    process.exitCode = 2;
    return;
  }
  if (e?.name === 'TendError') {
    process.stderr.write(`tend: ${e.message}\n`);
    process.exitCode = 1;
    return;
  }
  // The daemon said no (`tend report`): its message names the call; its code says whether the input was bad.
  if (e?.name === 'ApiError') {
    process.stderr.write(`tend: ${e.message}\n`);
    process.exitCode = e.code === 'INVALID' || e.code === 'BAD_REQUEST' ? 2 : 1;
    return;
  }
  process.stderr.write(`tend: ${e?.message ?? String(err)}\n`);
  process.exitCode = 1;
}

/** Bad input found by the CLI itself. */
export function usage(path: string, message: string): never {
  const err = Object.assign(new Error(`${path}: ${message}`), { name: 'TendError', code: 'INVALID', issues: [{ path, message }] });
  throw err;
}

/**
 * Runs an engine call; INVALID issues come back with their paths named as the flags that set them
 * (`every` → `--every`, `after.0` → `--after`), so that a refusal names what the user typed.
 */
export async function asFlags<T>(flagOf: Record<string, string>, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const e = err as { name?: string; code?: string; message?: string; issues?: { path: string; message: string }[] };
    if (e?.name !== 'TendError' || e.code !== 'INVALID' || !e.issues?.length) throw err;
    // The longest known prefix of the path: `slurm.time` → --time-limit, `after.0` → --after.
    const flag = (path: string) => {
      const parts = path.split('.');
      for (let k = parts.length; k > 0; k--) {
        const f = flagOf[parts.slice(0, k).join('.')];
        if (f) return f;
      }
      return path;
    };
    const issues = e.issues.map((i) => ({ path: flag(i.path), message: i.message }));
    throw Object.assign(new Error(e.message), { name: 'TendError', code: 'INVALID', issues });
  }
}

export function print(json: boolean | undefined, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

export async function dataDirPath(): Promise<string> {
  const { dataDir } = await import('../engine/datadir.js');
  return dataDir();
}

let settingsRead: Promise<SettingsRead> | null = null;
type SettingsRead = ReturnType<typeof import('../engine/settings.js').readSettings>;

/** The environment's settings, read once per command; a bad value is named and its default used. */
export async function cliSettingsRead(): Promise<SettingsRead> {
  settingsRead ??= import('../engine/settings.js').then(({ readSettings }) => {
    const read = readSettings(process.env);
    // A refused knob is the daemon's to refuse; a command goes on with its default (a bad
    // TEND_DAEMON_INTERVAL_MS must not stop `tend daemon stop`).
    for (const p of read.problems) if (!p.refused) process.stderr.write(`tend: ${p.message}\n`);
    return read;
  });
  return settingsRead;
}

export async function cliSettings(): Promise<Settings> {
  return (await cliSettingsRead()).settings;
}

/** The database this command opened, for a message about its lock. */
let openedDb: string | null = null;

export async function openStore(): Promise<Store> {
  const [{ Store }, { paths }] = await Promise.all([import('../engine/store/store.js'), import('../engine/datadir.js')]);
  openedDb = paths(await dataDirPath()).db;
  return Store.open(openedDb);
}

export async function withStore<T>(fn: (store: Store) => T | Promise<T>): Promise<T> {
  const store = await openStore();
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}

/** Wrap an action so any error becomes a clean message and exit code. */
export function action<A extends unknown[]>(fn: (...args: A) => Promise<void> | void): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      fail(err);
    }
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function table(rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
