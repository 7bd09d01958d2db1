// The full integrity check reads every page of tend.db: seconds to tens of seconds once history
// has grown, too long for the event loop that answers the API and runs the pass. It runs on its own
// read-only connection in a worker thread; WAL lets the daemon write meanwhile.
import { createRequire } from 'node:module';
import { sqliteNativeBinding } from './sqlite-binding.js';

export interface IntegrityResult {
  ok: boolean;
  /** What SQLite reported (at most 10 lines); empty when ok. */
  problems: string[];
  ms: number;
}

// Plain CommonJS evaluated in the worker: it needs no build step, so tests and dist share it.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const t0 = performance.now();
let problems;
try {
  const db = new Database(workerData.path, { readonly: true, fileMustExist: true, ...(workerData.binding ? { nativeBinding: workerData.binding } : {}) });
  try {
    db.pragma('busy_timeout = 5000');
    problems = db.pragma('quick_check(10)').map((r) => r.quick_check).filter((x) => x !== 'ok');
  } finally {
    db.close();
  }
} catch (err) {
  problems = [(err && err.code ? err.code + ': ' : '') + (err && err.message ? err.message : String(err))];
}
parentPort.postMessage({ ok: problems.length === 0, problems, ms: performance.now() - t0 });
`;

/** `PRAGMA quick_check` of the file at `path`, off the calling thread. Never rejects; an abort ends the thread. */
export function checkIntegrity(path: string, signal?: AbortSignal): Promise<IntegrityResult> {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve) => {
    // Under Electron the same Electron-ABI build the store uses.
    let binding: string | undefined;
    try {
      binding = sqliteNativeBinding();
    } catch (err) {
      resolve({ ok: false, problems: [(err as Error).message], ms: 0 });
      return;
    }
    const t0 = performance.now();
    let settled = false;
    const done = (r: IntegrityResult) => {
      if (settled) return;
      settled = true;
      resolve(r);
    };
    // Node's worker modules load with the first check, not with every daemon (some 0.4 MiB idle).
    const { Worker } = process.getBuiltinModule('node:worker_threads');
    const worker = new Worker(WORKER, { eval: true, workerData: { path, module, binding } });
    worker.unref();
    worker.once('message', (r: IntegrityResult) => done(r));
    worker.once('error', (err) => done({ ok: false, problems: [err.message], ms: performance.now() - t0 }));
    worker.once('exit', (code) => done({ ok: false, problems: [`the check stopped (exit ${code})`], ms: performance.now() - t0 }));
    signal?.addEventListener('abort', () => void worker.terminate(), { once: true });
  });
}

/**
 * The daemon's checks: one at a time (callers while one runs share it), the last result kept so
 * the Health page's doctor reuses a recent one instead of reading the whole file again.
 */
export class IntegrityChecks {
  last: (IntegrityResult & { at: number }) | null = null;
  private running: Promise<IntegrityResult & { at: number }> | null = null;
  private readonly abort = new AbortController();

  constructor(private readonly path: string, private readonly now: () => number) {}

  run(): Promise<IntegrityResult & { at: number }> {
    this.running ??= checkIntegrity(this.path, this.abort.signal).then((r) => {
      this.running = null;
      this.last = { ...r, at: this.now() };
      return this.last;
    });
    return this.running;
  }

  /** The last result if younger than `maxAgeMs`, else a new check. */
  recent(maxAgeMs: number): Promise<IntegrityResult & { at: number }> {
    if (this.last && this.now() - this.last.at <= maxAgeMs) return Promise.resolve(this.last);
    return this.run();
  }

  stop(): void {
    this.abort.abort();
  }
}
