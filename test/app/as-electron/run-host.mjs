// The engine as the desktop app hosts it (main/app/host.ts → main/engine/host/engine-host.ts), in a
// process made to look like Electron (look-like-electron.mjs): start, run a batch job and a
// realtime routine through the app's client, report what happened as JSON lines on stdout.
//   node --import ./look-like-electron.mjs run-host.mjs DATA_DIR
import { existsSync, readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startHost } from '../../../dist/main/app/host.js';

const dataDir = process.argv[2];
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
async function until(fn, what, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}

let host;
try {
  host = await startHost({ dataDir, intervalMs: 100, log: () => undefined });
} catch (err) {
  out({ failed: err.message, code: err.code });
  process.exit(3);
}
out({ started: host.info.mode, pid: process.pid });
try {
  const c = host.client;
  const envFile = join(dataDir, 'job-env.txt');
  const job = await c.call('jobs.post', { command: 'sh', args: ['-c', `env > '${envFile}'`] });
  const alive = join(dataDir, 'realtime-up');
  const routine = await c.call('routines.create', { id: `${userInfo().username}@${hostname().split('.')[0]}:rt/alive`, command: 'sh', args: ['-c', `echo up > '${alive}'; while :; do sleep 1; done`], realtime: true });
  const done = await until(async () => {
    const j = await c.call('jobs.show', { id: job.id });
    return ['COMPLETED', 'ERROR', 'CANCEL'].includes(j.status) && j;
  }, 'the batch job to finish');
  out({ job: done.status });
  await until(() => existsSync(alive), 'the realtime routine to start');
  const running = await until(async () => {
    const r = await c.call('routines.show', { id: routine.id });
    return JSON.stringify(r).includes('"RUNNING"') && r;
  }, 'the realtime routine to be RUNNING');
  out({ realtime: 'RUNNING', id: running.id ?? routine.id });
  const env = Object.fromEntries(readFileSync(envFile, 'utf8').split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  out({ jobEnv: env });
  await c.call('routines.stop', { id: routine.id });
} catch (err) {
  out({ error: err.stack ?? String(err) });
  await host.close();
  process.exit(4);
}
await host.close();
out({ closed: true });
