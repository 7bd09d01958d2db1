// A real `tend daemon run` for a spec file: its own data dir, a fast pass, the HTTP API, and
// the built renderer served at the API address (browser mode).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo, hostname } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import { buildRequest, type Channel } from '../../contract/routes.js';
import type { Args, Result, Ret } from '../../contract/calls.js';
import { tendAsync } from '../helpers/cli.js';
import { Daemon as TendDaemon } from '../helpers/daemon.js';
import { within } from '../helpers/wait.js';
import { Worker } from '../helpers/worker.js';

export { TEND } from '../helpers/cli.js';

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

export async function startDaemon(): Promise<Daemon> {
  const root = mkdtempSync(join(tmpdir(), 'tend-e2e-'));
  const dataDir = join(root, 'data');
  const work = join(root, 'work');
  // (`daemon run` does not create a missing data dir yet.)
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(work, { recursive: true });
  // The daemon keeps the zone of this machine (and of the browser), not the UTC other tests pin.
  const env = { TEND_DAEMON_INTERVAL_MS: '200', TEND_API_PORT: '0', TZ: Intl.DateTimeFormat().resolvedOptions().timeZone };
  const workers: Worker[] = [];
  const daemon = new TendDaemon(dataDir, env);
  const { url, token } = await daemon.serving();

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

  async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const r = await tendAsync(dataDir, args, env);
    return { ...r, code: r.code ?? -1 };
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
      const agent = new Worker(computer, join(root, `worker-${computer}`), () => url, issued.stdout.trim(), slots).start();
      workers.push(agent);
      return {
        async stop() {
          await within(agent.kill('SIGTERM'), 5000, `worker ${computer} to exit`).catch(() => undefined);
        },
      };
    },
    log: () => daemon.stdout + daemon.stderr,
    async stop() {
      // Realtime routines and jobs outlive the daemon by design: stop what this test started,
      // through the daemon (it signals each one's process group by its recorded pid).
      for (const w of workers) if (w.running) void w.kill('SIGTERM');
      if (!daemon.exit) {
        try {
          for (const r of await api('routines.list', {})) if (r.lastRun && ['PENDING', 'DELAYED', 'STARTING', 'RUNNING'].includes(r.lastRun.status)) await apiResult('routines.stop', { id: r.id });
          for (const j of await api('jobs.list', {})) if (['WAITING', 'PENDING', 'FETCHED', 'RUNNING'].includes(j.status)) await apiResult('jobs.cancel', { id: j.id });
        } catch {
          /* the daemon is going anyway */
        }
        await daemon.stop(5000).catch(() => daemon.kill9());
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
