// Building job specs and scratch data dirs for tests of the local backend.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend, Handle, JobSpec, Outcome } from '../../main/engine/backend.js';
import type { LocalBackend } from '../../worker/local/index.js';
import { waitFor } from './wait.js';

export const FIXTURES = resolve(fileURLToPath(new URL('../fixtures/', import.meta.url)));

export function fixture(name: string): string {
  return join(FIXTURES, name);
}

export function tempDir(prefix = 'tend-local-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

let counter = 0;

/** A spec with a fresh run id under `<dataDir>/runs/<day>/`; override anything. */
export function makeSpec(dataDir: string, over: Partial<JobSpec> & { command: string }): JobSpec {
  counter += 1;
  const runId = over.runId ?? `test-${process.pid}-${Date.now().toString(36)}-${counter}`;
  const args = over.args ?? [];
  return {
    runId,
    kind: 'run',
    routineId: 'tester@HOST:fixtures',
    jobId: null,
    attempt: 1,
    cwd: null,
    env: {},
    scheduledAt: Date.UTC(2026, 0, 2, 3, 4, 5),
    runDir: join(dataDir, 'runs', '2026-01-02', runId),
    logCapBytes: 1024 * 1024,
    outputs: [],
    revision: null,
    maskedArgs: args,
    ...over,
    args,
  };
}

/** Poll until the backend says the job is done (or lost), then fetch its outcome. */
export async function settle(backend: Backend, handle: Handle, timeoutMs = 15_000): Promise<Outcome> {
  const state = await waitFor(async () => {
    const [s] = await backend.poll([handle]);
    return s && (s.state === 'done' || s.state === 'lost') ? s : null;
  }, timeoutMs, 'the job to finish');
  if (state.state === 'lost') throw new Error(`job lost: ${state.reason}`);
  return backend.fetch(handle);
}

/**
 * Stop every job still running under `<dataDir>/runs` (after a failed test), so no test leaves
 * processes behind.
 */
export async function stopAll(backend: LocalBackend, dataDir: string): Promise<void> {
  const runs = join(dataDir, 'runs');
  if (!existsSync(runs)) return;
  for (const day of readdirSync(runs)) {
    for (const run of readdirSync(join(runs, day))) {
      const runDir = join(runs, day, run);
      if (existsSync(join(runDir, 'exit_code'))) continue;
      const handle = backend.handleFromRunDir(runDir);
      if (handle) await backend.cancel(handle, 200).catch(() => undefined);
    }
  }
}
