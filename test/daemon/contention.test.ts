// Many writers at once against a running daemon: 4 shells posting chains of 40 jobs with --after
// and 2 shells adding and editing routines (the CLI), then the same with HTTP clients writing to
// the daemon's API beside the CLI. Every command succeeds (no "database is locked") and every job
// runs exactly once (its marker file has one line).
import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { type CliResult, FIXTURES, scratch, tendAsync } from '../helpers/cli.js';
import { Daemon } from '../helpers/daemon.js';
import { useDaemonBox } from '../helpers/daemon-box.js';

const SHELLS = 4;
const JOBS = 40;
const ROUTINE_SHELLS = 2;
const ROUTINES = 15;
const MARKER = join(FIXTURES, 'append-marker.sh');

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

interface Failure {
  what: string;
  code: number | null;
  stderr: string;
}

function jobs(dir: string): { id: number; status: string; reason: string | null }[] {
  const db = new Database(join(dir, 'tend.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(`SELECT id, status, reason FROM jobs ORDER BY id`).all() as { id: number; status: string; reason: string | null }[];
  } finally {
    db.close();
  }
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

/** One shell: JOBS jobs, each after the previous one it posted. Returns the marker files. */
async function jobShell(dir: string, shell: number, failures: Failure[]): Promise<string[]> {
  const markers: string[] = [];
  let prev: number | null = null;
  for (let i = 0; i < JOBS; i++) {
    const marker = join(dir, `marker-${shell}-${i}`);
    const args = ['job', 'post', '--json', ...(prev === null ? [] : ['--after', String(prev)]), '--', 'sh', MARKER, marker];
    const r = await tendAsync(dir, args);
    if (r.code !== 0) {
      failures.push({ what: args.join(' '), code: r.code, stderr: r.stderr });
      continue;
    }
    prev = (JSON.parse(r.stdout) as { id: number }).id;
    markers.push(marker);
  }
  return markers;
}

/** One shell: add ROUTINES routines (due far away) and edit each once. */
async function routineShell(dir: string, shell: number, failures: Failure[]): Promise<void> {
  const note = (args: string[], r: CliResult) => {
    if (r.code !== 0) failures.push({ what: args.join(' '), code: r.code, stderr: r.stderr });
  };
  for (let i = 0; i < ROUTINES; i++) {
    const id = `contend${shell}/r${i}`;
    const add = ['routine', 'add', id, '--at', '2099-01-01T00:00', '--tz', 'UTC', '--', 'true'];
    note(add, await tendAsync(dir, add));
    const edit = ['routine', 'edit', id, '--name', `edited-${shell}`, ...(i > 0 ? ['--after', `contend${shell}/r${i - 1}`] : [])];
    note(edit, await tendAsync(dir, edit));
  }
}

async function expectEveryJobRanOnce(dir: string, markers: string[]): Promise<void> {
  expect(markers).toHaveLength(SHELLS * JOBS);
  await waitFor(() => jobs(dir).length === SHELLS * JOBS && jobs(dir).every((j) => j.status === 'COMPLETED'), 240_000, 'every job to complete', 200);
  for (const m of markers) expect(lines(m), m).toHaveLength(1);
}

it('4 shells posting chained jobs and 2 editing routines beside a daemon: no command fails, each job runs once', async () => {
  box = scratch('tend-contend-');
  const d = await new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
  const failures: Failure[] = [];
  const shells = Array.from({ length: SHELLS }, (_, s) => jobShell(box.dir, s, failures));
  const editors = Array.from({ length: ROUTINE_SHELLS }, (_, s) => routineShell(box.dir, s, failures));
  const markers = (await Promise.all(shells)).flat();
  await Promise.all(editors);
  expect(failures).toEqual([]);
  await expectEveryJobRanOnce(box.dir, markers);
  expect(d.exit).toBeNull();
}, 600_000);

it('the same with HTTP clients writing to the daemon API at the same time: no request and no command fails', async () => {
  box = scratch('tend-contend-api-');
  const d = await new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100' }).ready();
  const api = JSON.parse(readFileSync(join(box.dir, 'api.json'), 'utf8')) as { url: string; token: string };
  const failures: Failure[] = [];
  const post = async (path: string, body: unknown, method = 'POST') => {
    const res = await fetch(api.url + path, { method, headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    if (!res.ok) failures.push({ what: `${method} ${path}`, code: res.status, stderr: text });
    return text;
  };
  // Two API clients: one posts a chain of jobs, one adds and edits routines.
  const apiJobs = (async () => {
    const markers: string[] = [];
    let prev: number | null = null;
    for (let i = 0; i < JOBS; i++) {
      const marker = join(box.dir, `marker-api-${i}`);
      const text = await post('/api/jobs', { command: 'sh', args: [MARKER, marker], after: prev === null ? [] : [prev] });
      try {
        const id = (JSON.parse(text) as { value?: { id: number } }).value?.id;
        if (id === undefined) continue;
        prev = id;
        markers.push(marker);
      } catch {
        /* recorded as a failure */
      }
    }
    return markers;
  })();
  const apiRoutines = (async () => {
    for (let i = 0; i < ROUTINES; i++) {
      const id = `tester@box:api/r${i}`;
      await post('/api/routines', { id, at: '2099-01-01T00:00', tz: 'UTC', command: 'true' });
      await post(`/api/routines/${encodeURIComponent(`${id}`)}`, { changes: { name: 'edited-api' } }, 'PUT');
    }
  })();
  const shells = Array.from({ length: SHELLS - 1 }, (_, s) => jobShell(box.dir, s, failures));
  const editors = Array.from({ length: ROUTINE_SHELLS - 1 }, (_, s) => routineShell(box.dir, s, failures));
  const markers = [...(await apiJobs), ...(await Promise.all(shells)).flat()];
  await Promise.all([apiRoutines, ...editors]);
  expect(failures).toEqual([]);
  await expectEveryJobRanOnce(box.dir, markers);
  expect(d.exit).toBeNull();
}, 600_000);
