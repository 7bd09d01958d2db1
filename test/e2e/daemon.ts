// A real `tend daemon run` for a spec file: its own data dir, a fast pass, the HTTP API, and
// the built renderer served at the API address (browser mode).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { buildRequest, type Channel } from '../../main/engine/api/routes.js';
import type { Args, Result, Ret } from '../../preload/contract.js';

export const TEND = resolve('dist/main/cli/tend.js');

/** The computer the daemon's local backend serves (routines addressed elsewhere never start). */
export const COMPUTER = `${userInfo().username}@${hostname().split('.')[0]}`;

export interface Daemon {
  url: string;
  token: string;
  dataDir: string;
  /** Scratch directory for fixture scripts. */
  work: string;
  api<C extends Channel>(channel: C, args: Args<C>): Promise<Ret<C>>;
  apiResult<C extends Channel>(channel: C, args: Args<C>): Promise<Result<Ret<C>>>;
  /** Open the UI the way a person would: URL/#token=…, then the given route. */
  open(page: Page, route?: string): Promise<void>;
  script(name: string, body: string): string;
  /** Run the CLI against this data dir. */
  cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Start a real worker agent for `computer` (its token issued through the CLI). */
  worker(computer: string, slots: number): Promise<{ stop(): Promise<void> }>;
  log(): string;
  stop(): Promise<void>;
}

async function until<T>(what: string, fn: () => T | null | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startDaemon(): Promise<Daemon> {
  const root = mkdtempSync(join(tmpdir(), 'tend-e2e-'));
  const dataDir = join(root, 'data');
  const work = join(root, 'work');
  // (`daemon run` does not create a missing data dir yet.)
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(work, { recursive: true });
  const env = { ...process.env, TEND_DATA_DIR: dataDir, TEND_DAEMON_INTERVAL_MS: '200', TEND_API_PORT: '0' };
  let output = '';
  const workers: ChildProcess[] = [];
  const child: ChildProcess = spawn(process.execPath, [TEND, 'daemon', 'run'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const apiFile = join(dataDir, 'api.json');
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await until('the daemon to write api.json', () => {
    if (child.exitCode !== null) throw new Error(`daemon exited ${child.exitCode}:\n${output}`);
    if (!existsSync(apiFile)) return null;
    try {
      return JSON.parse(readFileSync(apiFile, 'utf8')) as { url: string; token: string };
    } catch {
      return null;
    }
  });
  const { url, token } = JSON.parse(readFileSync(apiFile, 'utf8')) as { url: string; token: string };
  await new Promise<void>((r) => {
    const tick = () => void fetch(`${url}/health`).then((res) => (res.ok ? r() : setTimeout(tick, 50)), () => setTimeout(tick, 50));
    tick();
  });

  async function apiResult<C extends Channel>(channel: C, args: Args<C>): Promise<Result<Ret<C>>> {
    const req = buildRequest(channel, args as Record<string, unknown>);
    const res = await fetch(url + req.url, {
      method: req.method,
      headers: { authorization: `Bearer ${token}`, ...(req.body ? { 'content-type': 'application/json' } : {}) },
      body: req.body ? JSON.stringify(req.body) : undefined,
    });
    return (await res.json()) as Result<Ret<C>>;
  }

  async function api<C extends Channel>(channel: C, args: Args<C>): Promise<Ret<C>> {
    const r = await apiResult(channel, args);
    if (!r.ok) throw new Error(`${channel}: ${r.error.code} ${r.error.message}`);
    return r.value;
  }

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((r) => {
      const p = spawn(process.execPath, [TEND, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.on('exit', (code) => r({ code: code ?? -1, stdout, stderr }));
    });
  }

  return {
    url,
    token,
    dataDir,
    work,
    apiResult,
    api,
    async open(page, route = '/today') {
      await page.goto(`${url}/#token=${token}`);
      if (route !== '/today') await page.goto(`${url}/#${route}`);
    },
    script(name, body) {
      const file = join(work, name);
      writeFileSync(file, `#!/bin/sh\n${body}\n`);
      chmodSync(file, 0o755);
      return file;
    },
    cli,
    async worker(computer, slots) {
      const issued = await cli(['worker', 'token', computer]);
      if (issued.code !== 0) throw new Error(`worker token: ${issued.stderr}`);
      const agent = spawn(process.execPath, [TEND, 'worker', '--server', url, '--token', issued.stdout.trim(), '--computer', computer, '--batchjobs', String(slots), '--data-dir', join(root, `worker-${computer}`)], { env, stdio: 'ignore' });
      const gone = new Promise<void>((r) => agent.once('exit', () => r()));
      workers.push(agent);
      return {
        async stop() {
          if (agent.exitCode === null) agent.kill('SIGTERM');
          await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
        },
      };
    },
    log: () => output,
    async stop() {
      // Realtime routines and jobs outlive the daemon by design: stop what this test started,
      // through the daemon (it signals each one's process group by its recorded pid).
      for (const w of workers) if (w.exitCode === null) w.kill('SIGTERM');
      if (child.exitCode === null) {
        try {
          for (const r of await api('routines.list', {})) if (r.lastRun && ['PENDING', 'DELAYED', 'STARTING', 'RUNNING'].includes(r.lastRun.status)) await apiResult('routines.stop', { id: r.id });
          for (const j of await api('jobs.list', {})) if (['WAITING', 'PENDING', 'FETCHED', 'RUNNING'].includes(j.status)) await apiResult('jobs.cancel', { id: j.id });
        } catch {
          /* the daemon is going anyway */
        }
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
