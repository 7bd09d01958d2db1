// Starting job wrappers from a small helper process instead of the daemon itself. A fork copies
// the parent's page tables and libuv waits until the child has exec'd: from a daemon holding a
// V8 heap and SQLite, on a busy machine, each spawn blocked the event loop for milliseconds,
// which was the largest single cost of a launch. The helper (plain Node, nothing loaded) does the
// forks and reports each wrapper's pid and its exit over IPC; the daemon only sends a message.
//
// Nothing depends on the helper for correctness: wrappers are detached (their own session), so
// they outlive it like they outlive the daemon; if it is gone, launches fall back to spawning
// here, and an exit it did not report is found by the next timed pass. It exits when the daemon
// does (its IPC channel closes).
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { errorMessage } from '../../main/engine/errors.js';
import { nodeChildEnv, nodeExecPath } from '../../main/engine/node-runtime.js';

export interface WrapperLaunch {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** The wrapper's own stdout/stderr go here (appended). */
  log: string;
}

/** The helper's whole program (CommonJS, no imports of ours, so it runs from source and dist alike). */
const HELPER = `
const { spawn } = require('node:child_process');
const { openSync, closeSync } = require('node:fs');
// With a callback, a send that fails (the daemon gone: EPIPE) is handed to it, not thrown as an unhandled 'error'.
const send = (m) => { try { process.send(m, () => {}); } catch {} };
const msg = (e) => String((e && e.message) || e);
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  if (!m || (m.t !== 'spawn' && m.t !== 'piped')) return;
  let fd;
  try { fd = openSync(m.log, 'a', 0o600); } catch (e) { return send({ t: 'failed', id: m.id, message: msg(e) }); }
  let child;
  try { child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: [m.t === 'piped' ? 'pipe' : 'ignore', fd, fd] }); }
  catch (e) { closeSync(fd); return send({ t: 'failed', id: m.id, message: msg(e) }); }
  closeSync(fd);
  if (child.pid === undefined) return child.once('error', (e) => send({ t: 'failed', id: m.id, message: msg(e) }));
  child.on('error', () => {});
  child.once('exit', () => send({ t: 'exit', id: m.id }));
  child.unref();
  if (m.t !== 'piped') return send({ t: 'spawned', id: m.id, pid: child.pid });
  // The other end of its stdin goes to the daemon, which then holds it alone.
  child.stdin.on('error', () => {});
  try { process.send({ t: 'spawned', id: m.id, pid: child.pid }, child.stdin, () => child.stdin.destroy()); }
  catch { child.stdin.destroy(); }
});
`;

/** The helper is gone (or never came up): the caller decides whether the wrapper may have started. */
export class HelperGone extends Error {}

type Reply = { t: 'spawned'; id: number; pid: number } | { t: 'failed'; id: number; message: string } | { t: 'exit'; id: number };

interface Pending {
  resolve: (pid: number, stdin?: Socket) => void;
  reject: (err: Error) => void;
  onExit: () => void;
}

class Spawner {
  private child: ChildProcess | null = null;
  /** Launches sent, not answered yet. */
  private readonly pending = new Map<number, Pending>();
  /** Wrappers started, whose exit is still to be reported. */
  private readonly exits = new Map<number, () => void>();
  private nextId = 1;
  private failures = 0;

  get available(): boolean {
    return this.failures < 3;
  }

  /** Resolves with the wrapper's pid; `onExit` is called when it exits. */
  launch(l: WrapperLaunch, onExit: () => void): Promise<number> {
    return this.request('spawn', l, onExit).started.then((s) => s.pid);
  }

  /**
   * A wrapper whose stdin is a pipe (a socket) the helper passes back to this process, which then
   * holds its other end alone: a standby's lifeline and go (standby.ts), a realtime waiter's end
   * heard as the pipe's. `id` names it for `onExitOf`.
   */
  launchPiped(l: WrapperLaunch, onExit: () => void): { id: number; started: Promise<{ pid: number; stdin?: Socket | undefined }> } {
    return this.request('piped', l, onExit);
  }

  /** Who hears the exit of the wrapper the helper started as `id`, from now on; false if it is not known (gone). */
  onExitOf(id: number, onExit: () => void): boolean {
    if (!this.exits.has(id)) return false;
    this.exits.set(id, onExit);
    return true;
  }

  private request(t: 'spawn' | 'piped', l: WrapperLaunch, onExit: () => void): { id: number; started: Promise<{ pid: number; stdin?: Socket | undefined }> } {
    const child = this.helper();
    const id = this.nextId++;
    const started = new Promise<{ pid: number; stdin?: Socket | undefined }>((resolve, reject) => {
      this.pending.set(id, { resolve: (pid, stdin) => resolve({ pid, stdin }), reject, onExit });
      this.busy();
      // The helper can die between two launches: its channel then fails the write later (EPIPE),
      // through this callback. Without one, Node raises it as an 'error' event per failed send.
      // A failed write means the channel is broken: the helper is gone for every launch, not just this one.
      const unsent = (err: unknown) => {
        const why = `could not reach the spawn helper: ${errorMessage(err)}`;
        this.drop(child, why);
        if (!this.pending.delete(id)) return; // already rejected with the others
        this.busy();
        reject(new HelperGone(why));
      };
      try {
        child.send({ t, id, ...l }, (err) => {
          if (err) unsent(err);
        });
      } catch (err) {
        unsent(err);
      }
    });
    return { id, started };
  }

  private helper(): ChildProcess {
    if (this.child) return this.child;
    // Under Electron process.execPath is the app: the helper must run as Node, not as a second app.
    const child = spawn(nodeExecPath(), ['-e', HELPER], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json', env: nodeChildEnv({ PATH: process.env['PATH'] ?? '' }) });
    child.on('message', (m: Reply, handle: unknown) => this.reply(m, handle instanceof Socket ? handle : undefined));
    child.once('exit', (code, signal) => this.drop(child, `the spawn helper exited (${signal ?? code})`));
    // `on`, not `once`: a dead helper can raise more than one error, and an unheard one would crash the daemon.
    child.on('error', (err) => this.drop(child, `the spawn helper failed: ${errorMessage(err)}`));
    this.child = child;
    this.busy();
    return child;
  }

  /** `child` is of no more use: launches waiting on it are refused; the next launch starts a new helper. */
  private drop(child: ChildProcess, why: string): void {
    if (this.child !== child) return;
    this.child = null;
    this.failures++;
    // Started wrappers keep running; only their exits go unreported (a timed pass finds them).
    this.exits.clear();
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.reject(new HelperGone(why));
    // Not waited on any more (its exit, if still to come, is only reaped).
    child.unref();
  }

  /** Keep this process alive only while the helper owes an answer. */
  private busy(): void {
    const c = this.child;
    if (!c) return;
    const channel = (c as ChildProcess & { channel?: { ref(): void; unref(): void } }).channel;
    if (this.pending.size > 0) {
      c.ref();
      channel?.ref();
    } else {
      c.unref();
      channel?.unref();
    }
  }

  private reply(m: Reply, stdin?: Socket): void {
    if (m.t === 'exit') {
      const onExit = this.exits.get(m.id);
      this.exits.delete(m.id);
      onExit?.();
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.t === 'spawned') {
      this.exits.set(m.id, p.onExit);
      p.resolve(m.pid, stdin);
    } else {
      p.reject(new Error(m.message));
    }
    this.busy();
  }
}

const shared = new Spawner();

/**
 * Start a wrapper through the helper; null when the helper is not to be used (`use` false: the
 * host's TEND_SPAWNER=off) or not available (it failed repeatedly), in which case the caller
 * spawns it itself.
 */
export function launchViaHelper(l: WrapperLaunch, onExit: () => void, use = true): Promise<number> | null {
  return use && shared.available ? shared.launch(l, onExit) : null;
}

/** The helper, for piped wrappers; null when it is not to be used or not available (then there are none). */
export function standbyHelper(use = true): Pick<Spawner, 'launchPiped' | 'onExitOf'> | null {
  return use && shared.available ? shared : null;
}

/** Spawn the wrapper from this process (the fallback). */
export function launchHere(l: WrapperLaunch, onExit: () => void): Promise<number> {
  let fd: number;
  try {
    fd = openSync(l.log, 'a', 0o600);
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  let child: ChildProcess;
  try {
    child = spawn(l.file, l.args, { cwd: l.cwd, env: l.env, detached: true, stdio: ['ignore', fd, fd] });
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  } finally {
    closeSync(fd);
  }
  child.once('exit', onExit);
  child.unref();
  const pid = child.pid;
  if (pid !== undefined) {
    child.on('error', () => undefined);
    return Promise.resolve(pid);
  }
  return new Promise((_, reject) => child.once('error', reject));
}
