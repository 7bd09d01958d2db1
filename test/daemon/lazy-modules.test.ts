// An idle daemon loads what idling needs: no YAML parser (only schedule import/export use one),
// no Ajv (no route declares a JSON schema; zod checks inputs), no OpenAPI builder until the
// document is asked for, no Intl formatter (ICU's locale data) for its status counts of today, no
// cron-parser (and luxon) before it checks a cron expression.
// Nor Node's HTTPS and HTTP/2 modules, which Fastify requires and the API never serves, nor its
// assert, which Fastify's router calls only to throw (the CLI bundle defers them,
// scripts/bundle-cli.mjs), nor its CommonJS lexer, nor its worker threads (only an integrity
// check starts one), nor node:crypto before a request or a run needs it. And it runs as it
// ships: from the CLI bundle, not from tsc's modules.
// Each would cost the resident daemon megabytes it never uses. And once it checks an event's data
// against the catalogue, it does so with the zod it already holds, not a second copy.
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FIXTURES, REPO, scratch, tendOk } from '../helpers/cli.js';
import { Daemon, readState } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { useDaemonBox } from '../helpers/daemon-box.js';
import { join } from 'node:path';

let box: ReturnType<typeof scratch>;
useDaemonBox(() => box);

const builtins = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('builtin '))
    .map((l) => l.slice('builtin '.length));

const loaded = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('module ') || l.startsWith('required '))
    .map((l) => l.slice(l.indexOf(' ') + 1));

describe('an idle daemon loads only what idling needs', () => {
  it('serves its API from the CLI bundle and saves its status counts without yaml, ajv, cron-parser, an Intl formatter or the OpenAPI builder, and loads the builder when the document is asked for', async () => {
    box = scratch('tend-lazy-daemon-');
    // A cron routine whose next run the command has worked out: the idle daemon checks no expression.
    tendOk(box.dir, ['routine', 'add', 'nightly', '--cron', '0 3 * * *', '--tz', 'UTC', '--', 'true']);
    const d = await new Daemon(box.dir, {}, ['--quiet'], { nodeArgs: ['--import', join(FIXTURES, 'list-modules.mjs'), '-r', join(FIXTURES, 'list-required.cjs'), '-r', join(FIXTURES, 'note-intl.cjs')] }).ready();
    const api = await d.serving();
    await waitFor(() => readState(box.dir)?.counts, 10_000, 'the status counts saved');
    const health = await fetch(`${api.url}/health`);
    expect(health.status).toBe(200);
    const before = d.stderr;
    const doc = await fetch(`${api.url}/api/openapi.json`, { headers: { authorization: `Bearer ${api.token}` } });
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { openapi?: string }).openapi).toMatch(/^3\./);
    await d.stop();
    const idle = loaded(before);
    const all = loaded(d.stderr); // CommonJS modules are listed at exit: they cover the document's request too
    // The daemon's chunk of the bundle holds the engine and the API server; tsc's modules stay unloaded.
    expect(idle.some((m) => m.includes('/dist/main/cli/chunks/main/engine/daemon/run.js'))).toBe(true);
    expect(idle.filter((m) => m.includes('/dist/main/engine/'))).toEqual([]);
    expect(all.some((m) => m.includes('/node_modules/better-sqlite3/'))).toBe(true);
    expect(all.filter((m) => /\/node_modules\/(yaml|ajv|cron-parser|luxon|@fastify\/ajv-compiler|@fastify\/fast-json-stringify-compiler)\//.test(m))).toEqual([]);
    expect(idle.filter((m) => m.includes('/api/openapi.js'))).toEqual([]);
    expect(before.split('\n').filter((l) => l.startsWith('intl '))).toEqual([]);
    expect(all.some((m) => m.includes('/api/openapi.js'))).toBe(true);
  });

  it('serves its API without zod until a request that validates, and that request still validates: a bad body is answered 400 naming the field', async () => {
    box = scratch('tend-lazy-daemon-');
    tendOk(box.dir, ['routine', 'add', 'nightly', '--cron', '0 3 * * *', '--tz', 'UTC', '--', 'true']);
    const d = await new Daemon(box.dir, {}, ['--quiet'], { nodeArgs: ['--import', join(FIXTURES, 'list-modules.mjs'), '-r', join(FIXTURES, 'list-required.cjs')] }).ready();
    const api = await d.serving();
    await waitFor(() => readState(box.dir)?.counts, 10_000, 'the status counts saved');
    expect((await fetch(`${api.url}/health`)).status).toBe(200);
    const idle = loaded(d.stderr);
    const bad = await fetch(`${api.url}/api/timing/preview`, { method: 'POST', headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ timing: { every: '1h' }, count: 0 }) });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { ok: boolean; error: { code: string; issues: { path: string; message: string }[] } };
    expect(body.error.code).toBe('INVALID');
    expect(body.error.issues.map((i) => i.path)).toEqual(['count']);
    await d.stop();
    const all = loaded(d.stderr);
    const zod = (m: string) => /\/chunks\/shared\/zod-[\w-]+\.js$|\/node_modules\/zod\//.test(m);
    expect(idle.some((m) => m.includes('/dist/main/cli/chunks/main/engine/daemon/run.js'))).toBe(true);
    expect(idle.filter(zod)).toEqual([]);
    // The request loaded it: the bundle's zod chunk, the one copy.
    expect(all.filter(zod).map((m) => m.replace(/.*\/dist\//, ''))).toEqual([expect.stringMatching(/^main\/cli\/chunks\/shared\/zod-[\w-]+\.js$/)]);
  });

  it('checks the data of an event appended before any request has loaded zod with the bundle\'s zod, not a copy from node_modules', async () => {
    box = scratch('tend-lazy-daemon-');
    // A routine that fires and completes at once: its run's events carry data (the exit status).
    tendOk(box.dir, ['routine', 'add', 'soon', '--in', '1s', '--', 'true']);
    const d = await new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100', TEND_API: 'off' }, ['--quiet'], { nodeArgs: ['--import', join(FIXTURES, 'list-modules.mjs'), '-r', join(FIXTURES, 'list-required.cjs')] }).ready();
    await waitFor(() => /:soon.*COMPLETED|COMPLETED.*:soon/s.test(JSON.stringify(tendOk(box.dir, ['routine', 'list', '--json']))), 20_000, 'the routine to complete');
    await d.stop();
    const all = loaded(d.stderr);
    expect(all.filter((m) => /\/node_modules\/zod\//.test(m))).toEqual([]);
    // The catalogue required the bundle's share of zod (require() of an ES module is listed with the CommonJS ones).
    expect(all.some((m) => m.endsWith('/dist/main/cli/event-zod.js'))).toBe(true);
  });

  it('serves its API, and the OpenAPI document, without node:https, node:http2, node:assert, node:worker_threads or Node\'s CommonJS lexer', async () => {
    box = scratch('tend-lazy-daemon-');
    // No module hook here: Node runs one (list-modules.mjs) on a worker thread of its own.
    const d = await new Daemon(box.dir, {}, ['--quiet'], { nodeArgs: ['-r', join(FIXTURES, 'list-builtins.cjs')] }).ready();
    const api = await d.serving();
    const doc = await fetch(`${api.url}/api/openapi.json`, { headers: { authorization: `Bearer ${api.token}` } });
    expect(doc.status).toBe(200);
    await d.stop();
    const native = builtins(d.stderr);
    expect(native).toContain('http');
    expect(native.filter((m) => /^(https|http2|tls|_tls_wrap|worker_threads|assert|internal\/assert\/assertion_error)$/.test(m))).toEqual([]);
    // better-sqlite3 is required, not imported: Node reads no CommonJS module's exports with its lexer.
    expect(native.filter((m) => m.includes('cjs-module-lexer'))).toEqual([]);
  });

  it('runs as CommonJS and idles without node:fs/promises: Node\'s ES module loader links no module, and neither fs/promises nor the readline modules it brings are loaded', async () => {
    box = scratch('tend-lazy-daemon-');
    tendOk(box.dir, ['routine', 'add', 'nightly', '--cron', '0 3 * * *', '--tz', 'UTC', '--', 'true']);
    const d = await new Daemon(box.dir, {}, ['--quiet'], { nodeArgs: ['-r', join(FIXTURES, 'list-builtins.cjs')] }).ready();
    await d.serving();
    await waitFor(() => readState(box.dir)?.counts, 10_000, 'the status counts saved');
    await d.stop();
    const native = builtins(d.stderr);
    expect(native).toContain('http');
    expect(native.filter((m) => /^(internal\/modules\/esm\/(module_job|translators|load)|fs\/promises|internal\/fs\/promises|internal\/readline\/interface)$/.test(m))).toEqual([]);
  });

  it('starts with a new API token and idles without node:crypto: the token is 32 random bytes, and the first request that presents it loads crypto to compare it', async () => {
    box = scratch('tend-lazy-daemon-');
    const d = await new Daemon(box.dir, {}, ['--quiet'], { nodeArgs: ['-r', join(FIXTURES, 'list-builtins.cjs')] }).ready();
    const api = await d.serving();
    expect(Buffer.from(api.token, 'base64url')).toHaveLength(32);
    await waitFor(() => readState(box.dir)?.counts, 10_000, 'the status counts saved');
    await d.stop();
    expect(builtins(d.stderr).filter((m) => /^(crypto|internal\/crypto\/.*)$/.test(m))).toEqual([]);

    // Another daemon on the same dir keeps that token; an authenticated request compares it (node:crypto's timingSafeEqual).
    const again = await new Daemon(box.dir, {}, ['--quiet'], { nodeArgs: ['-r', join(FIXTURES, 'list-builtins.cjs')] }).ready();
    const same = await again.serving();
    expect(same.token).toBe(api.token);
    expect((await fetch(`${same.url}/api/routines`, { headers: { authorization: `Bearer ${same.token}` } })).status).toBe(200);
    expect((await fetch(`${same.url}/api/routines`, { headers: { authorization: `Bearer x${same.token}` } })).status).toBe(401);
    await again.stop();
    expect(builtins(again.stderr)).toContain('crypto');
  });

  it('checks the data of the events it appends with the zod its routes use: no second copy from node_modules beside the bundle\'s', async () => {
    box = scratch('tend-lazy-daemon-');
    const d = await new Daemon(box.dir, { TEND_DAEMON_INTERVAL_MS: '100' }, ['--quiet'], { nodeArgs: ['--import', join(FIXTURES, 'list-modules.mjs'), '-r', join(FIXTURES, 'list-required.cjs')] }).ready();
    // job:completed carries its exit status: the append checks it against its schema.
    const job = tendOk<{ id: number }>(box.dir, ['job', 'post', '--json', '--', 'true']);
    await waitFor(() => tendOk<{ status: string }>(box.dir, ['job', 'show', String(job.id), '--json']).status === 'COMPLETED', 20_000, 'the job to complete');
    await d.stop();
    const all = loaded(d.stderr);
    // The CLI bundle holds zod (scripts/bundle-cli.mjs): neither its ES modules nor its CommonJS build are loaded.
    expect(all.filter((m) => /\/node_modules\/zod\//.test(m))).toEqual([]);
  });

  it('works out a stored cron routine\'s next run and names its run, as a daemon does each time one fires, without cron-parser (and luxon) or node:crypto; validating an expression loads cron-parser', () => {
    const timing = pathToFileURL(join(REPO, 'dist', 'main', 'engine', 'timing', 'next.js')).href;
    const ids = pathToFileURL(join(REPO, 'dist', 'main', 'engine', 'ids.js')).href;
    const script = `
      const { nextRunAt, validateCron } = await import(${JSON.stringify(timing)});
      const { newRunId } = await import(${JSON.stringify(ids)});
      const next = nextRunAt({ mode: 'cron', cron: '5 3 * * *' }, Date.UTC(2026, 0, 1), 'UTC');
      const id = newRunId(next);
      const firing = { next, id, builtins: process.moduleLoadList.slice(), required: Object.keys(require('node:module')._cache) };
      const verdict = validateCron('7 4 * * *');
      const validating = { verdict, required: Object.keys(require('node:module')._cache) };
      process.stdout.write(JSON.stringify({ firing, validating }));`;
    const out = JSON.parse(execFileSync(process.execPath, ['--input-type=commonjs', '-e', `(async () => {${script}})()`], { cwd: REPO, encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } })) as {
      firing: { next: number; id: string; builtins: string[]; required: string[] };
      validating: { verdict: string | null; required: string[] };
    };
    expect(out.firing.next).toBe(Date.UTC(2026, 0, 1, 3, 5));
    expect(out.firing.id).toMatch(/^[0-9a-z]{9}-[0-9a-f]{8}$/);
    expect(out.firing.builtins.filter((m) => /^NativeModule (crypto|internal\/crypto\/.*)$/.test(m))).toEqual([]);
    expect(out.firing.required.filter((m) => /\/node_modules\/(cron-parser|luxon)\//.test(m))).toEqual([]);
    expect(out.validating.verdict).toBeNull();
    expect(out.validating.required.some((m) => m.includes('/node_modules/cron-parser/'))).toBe(true);
  });
});
