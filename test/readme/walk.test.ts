// The README's examples, walked in order as a new user would: every command of every `sh` block
// (the set-up block aside: test/readme/scripts.test.ts covers it) and every schedule file, run
// with bash in a scratch project whose scripts are stand-ins, against a scratch data dir, each
// checked against what the README says it does. The blocks are read from README.md, so the walk
// stays true as the README changes: a line with no check here fails, asking for one.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localComputer } from '../../main/engine/domain/schema.js';
import { alive, assertBuilt, killTracked, REPO, scratch, TEND, track } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';

interface Block {
  lang: string;
  lines: string[];
}

/** The fenced code blocks of a Markdown text, in order. */
export function codeBlocks(markdown: string): Block[] {
  const out: Block[] = [];
  let open: Block | null = null;
  for (const line of markdown.split('\n')) {
    const fence = /^```(\w*)\s*$/.exec(line);
    if (fence && !open) open = { lang: fence[1]!, lines: [] };
    else if (fence && open) {
      out.push(open);
      open = null;
    } else if (open) open.lines.push(line);
  }
  return out;
}

const here = localComputer();
const full = (id: string) => `${here}:${id}`;
const blocks = codeBlocks(readFileSync(join(REPO, 'README.md'), 'utf8'));

const box = scratch('tend-readme-');
const data = join(box.dir, 'data');
const project = join(box.dir, 'project');
const bin = join(box.dir, 'bin');
let daemon: { pid: number; out: () => string; exited: () => boolean } | null = null;

/** The environment of a user who followed "npm link": `tend` on the PATH, the data dir set. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TEND_')) env[k] = v;
  return { ...env, PATH: `${bin}:${env.PATH ?? ''}`, TEND_DATA_DIR: data, TZ: 'UTC', TOKEN: 's3cret-value', ...extra };
}

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sh(line: string, extra: Record<string, string> = {}): Result {
  const r = spawnSync('bash', ['-c', line], { cwd: project, env: userEnv(extra), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function json<T>(line: string): T {
  const r = sh(line);
  if (r.code !== 0) throw new Error(`${line}: exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

const show = (id: string) => json<{ definition: { cwd: string | null; timing: unknown; tz: string; dependencies: string[]; heartbeatMs: number | null; kind: string }; today: string | null; nextRun: string | null; history: { id: string; status: string }[] }>(`tend routine show ${id} --json`);
const job = (id: number) => json<{ status: string }>(`tend job show ${id} --json`);

/** Stand-ins for the README's scripts: each says it ran; the collector beats as the README shows. */
const SCRIPTS: Record<string, string> = {
  'download.sh': 'echo "downloaded into $(pwd)"',
  'report.sh': 'echo report "$@"',
  'collector.py': 'while :; do tend heartbeat; sleep 1; done',
  'backup.sh': 'echo backed up',
  'sync.sh': 'echo synced',
  'convert.sh': 'echo "converted $1" > converted.txt',
  'load.sh': 'test -f converted.txt && echo "loaded $1"',
};

beforeAll(() => {
  assertBuilt();
  mkdirSync(project, { recursive: true });
  mkdirSync(bin);
  writeFileSync(join(bin, 'tend'), `#!/bin/sh\nexec "${process.execPath}" "${TEND}" "$@"\n`, { mode: 0o755 });
  for (const [name, body] of Object.entries(SCRIPTS)) {
    writeFileSync(join(project, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(project, name), 0o755);
  }
  writeFileSync(join(project, 'parse.py'), 'print("parsed")\n');
  writeFileSync(join(project, 'in.csv'), 'a,b\n');
});

afterAll(async () => {
  if (daemon && alive(daemon.pid)) {
    process.kill(-daemon.pid, 'SIGTERM');
    await waitFor(() => daemon!.exited(), 20_000, 'the README’s daemon to stop');
  }
  await killTracked();
  box.remove();
});

/** `tend daemon run` stays in the foreground: started beside the walk, as in a second terminal. */
async function startDaemon(line: string): Promise<void> {
  let out = '';
  let exited = false;
  const child = spawn('bash', ['-c', `exec ${line}`], { cwd: project, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  track(child.pid!);
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.on('exit', () => (exited = true));
  daemon = { pid: child.pid!, out: () => out, exited: () => exited };
  await waitFor(
    () => {
      if (exited) throw new Error(`tend daemon run exited: ${out}`);
      const s = sh('tend daemon status --json');
      return s.code === 0 && (JSON.parse(s.stdout) as { healthy: boolean }).healthy;
    },
    30_000,
    'the daemon to be healthy',
    250,
  );
}

const ends = (s: string | null) => s === 'COMPLETED' || s === 'ERROR' || s === 'STOPPED' || s === 'CANCELLED';

/** What each README line does, by its command. A line without a check fails the walk. */
const CHECKS: [RegExp, (line: string, r: Result) => void | Promise<void>][] = [
  [/^tend routine add (\S+) .*--realtime --heartbeat (\S+)/, (line) => {
    const d = show(/^tend routine add (\S+)/.exec(line)![1]!);
    expect(d.definition).toMatchObject({ kind: 'realtime', heartbeatMs: 30_000, cwd: project });
  }],
  [/^tend routine add (\S+) /, (line, r) => {
    const id = /^tend routine add (\S+)/.exec(line)![1]!;
    expect(r.stdout).toBe(`added ${full(id)}\n`);
    const d = show(id);
    // Runs where it was added: `./download.sh` is the one beside you.
    expect(d.definition.cwd).toBe(project);
    expect(d.nextRun, `${id} has a next run`).not.toBeNull();
    const tz = /--tz (\S+)/.exec(line)?.[1];
    if (tz) expect(d.definition.tz).toBe(tz);
    for (const dep of /--after (\S+)/.exec(line)?.[1]?.split(',') ?? []) expect(d.definition.dependencies).toContain(full(dep));
    if (line.includes('$TOKEN')) {
      const text = sh(`tend routine show ${id}`).stdout;
      expect(text).toContain('--token=***');
      expect(text).not.toContain('s3cret');
    }
  }],
  [/^tend daemon run$/, async () => {
    // It prints the address to open (its pipe may deliver that a moment after the daemon answers).
    await waitFor(() => /http:\/\/127\.0\.0\.1:\d+\//.test(daemon!.out()), 10_000, 'the daemon to print its address');
  }],
  [/^tend routine list$/, (_line, r) => {
    for (const id of ['reports/download', 'reports/parse', 'reports/weekly', 'feeds/collector', 'backup/once', 'sync/loop']) expect(r.stdout).toContain(full(id));
    expect(r.stdout.split('\n')[0]).toMatch(/^ID +KIND +SCHEDULE +TRIGGER +NEXT RUN +TODAY$/);
  }],
  [/^tend routine run reports\/download$/, async (_line, r) => {
    expect(r.stdout).toMatch(/run \S+ (RUNNING|COMPLETED)/);
    await waitFor(() => ends(show('reports/download').today), 30_000, 'the run to end', 250);
    expect(show('reports/download').today).toBe('COMPLETED');
  }],
  [/^tend routine restart feeds\/collector$/, (_line, r) => {
    // The collector beats (tend heartbeat from inside it), so it was running to be restarted.
    expect(r.stdout).toMatch(/stopped 1, run \S+ RUNNING/);
  }],
  [/^tend routine stop feeds\/collector$/, async (_line, r) => {
    expect(r.stdout).toMatch(/: stopped \S+/);
    await waitFor(() => show('feeds/collector').today === 'STOPPED', 20_000, 'the collector to be STOPPED', 250);
  }],
  [/^tend logs reports\/download --follow$/, (_line, r) => {
    expect(r.stdout).toBe(`downloaded into ${project}\n`);
  }],
  [/^tend job post (?:--after (\d+) )?-- /, async (line, r) => {
    const id = Number(r.stdout.trim());
    expect(Number.isSafeInteger(id)).toBe(true);
    const after = /--after (\d+)/.exec(line)?.[1];
    if (after) expect(id).toBeGreaterThan(Number(after));
    await waitFor(() => ends(job(id).status), 30_000, `job ${id} to end`, 250);
    expect(job(id).status).toBe('COMPLETED');
  }],
  [/^tend next --cron "30 2 \* \* \*" --tz America\/New_York --count 5$/, (_line, r) => {
    const times = r.stdout.trim().split('\n');
    expect(times).toHaveLength(5);
    for (const t of times) expect(t).toMatch(/T0[67]:30:00/);
  }],
  [/^tend heartbeat$|^touch "\$TEND_RUN_DIR\/heartbeat"$/, () => {
    /* checked where the block runs: it is run as a routine would run it */
  }],
  [/^tend schedule import etl\.yaml$/, (_line, r) => {
    expect(r.stdout).toMatch(/^schedule etl: 2 created/);
    expect(show(full('etl/download')).definition.cwd).toBe(project);
    const load = show(full('etl/load')).definition;
    expect(load.cwd).toBe(join(project, 'jobs'));
    expect(load.dependencies).toEqual([full('etl/download')]);
  }],
];

/** `run|restart|stop ID` and `ID` stand for a choice and an id: the walk picks real ones. */
function concrete(line: string): string[] {
  const m = /^tend routine run\|restart\|stop ID$/.exec(line);
  if (m) return ['tend routine run reports/download', 'tend routine restart feeds/collector', 'tend routine stop feeds/collector'];
  if (/\bID\b/.test(line)) return [line.replace(/\bID\b/, 'reports/download')];
  return [line];
}

/** A line as typed, without its trailing comment (bash would ignore it too). */
const command = (line: string) => line.replace(/\s+#\s.*$/, '').trim();

async function walkLine(raw: string, extra: Record<string, string> = {}): Promise<void> {
  for (const line of concrete(command(raw))) {
    const check = CHECKS.find(([re]) => re.test(line));
    expect(check, `no check for the README line "${line}": add one to test/readme/walk.test.ts`).toBeDefined();
    if (line === 'tend daemon run') {
      await startDaemon(line);
      await check![1](line, { code: 0, stdout: '', stderr: '' });
      continue;
    }
    const r = sh(line, extra);
    expect(r.code, `${line}\n${r.stderr}`).toBe(0);
    await check![1](line, r);
  }
}

describe('the README, walked in order', () => {
  it('has the blocks this walk reads', () => {
    expect(blocks.filter((b) => b.lang === 'sh').length).toBeGreaterThanOrEqual(3);
    expect(blocks.some((b) => b.lang === 'yaml')).toBe(true);
  });

  it('every example does what the README says', async () => {
    for (const block of blocks) {
      const lines = block.lines.filter((l) => command(l) !== '' && !l.trim().startsWith('#'));
      if (block.lang === 'sh' && lines[0]?.startsWith('npm ci')) continue; // the set-up block
      if (block.lang === 'sh' && lines.every((l) => /^(tend heartbeat|touch "\$TEND_RUN_DIR)/.test(command(l)))) {
        // "From inside the routine": with TEND_RUN_DIR set, each line touches the heartbeat file.
        for (const [i, l] of lines.entries()) {
          const runDir = join(box.dir, `run-${i}`);
          mkdirSync(runDir);
          await walkLine(l, { TEND_RUN_DIR: runDir });
          expect(existsSync(join(runDir, 'heartbeat')), l).toBe(true);
          expect(Date.now() - statSync(join(runDir, 'heartbeat')).mtimeMs).toBeLessThan(60_000);
        }
        continue;
      }
      if (block.lang === 'sh') {
        for (const l of lines) await walkLine(l);
        continue;
      }
      if (block.lang === 'yaml') {
        // Its first comment names the file and the command that loads it.
        const head = /^# (\S+\.yaml) — load with: (tend schedule import \S+)$/.exec(block.lines[0] ?? '');
        expect(head, 'a schedule file block starts with "# NAME.yaml — load with: tend schedule import NAME.yaml"').not.toBeNull();
        writeFileSync(join(project, head![1]!), block.lines.join('\n'));
        await walkLine(head![2]!);
        continue;
      }
      throw new Error(`README block of language "${block.lang}": the walk does not know it`);
    }
    expect(daemon, 'the README starts a daemon').not.toBeNull();
  }, 300_000);
});
