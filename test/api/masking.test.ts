// Text a reporter or a routine supplied is masked wherever Tend serves it: a reporter's message
// (events API, MCP) like arguments; a routine's own output echoing its secret argument and
// environment values (`tend logs`, the log and follow routes, MCP) with ***. Files keep them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localComputer } from '../../main/engine/domain/schema.js';
import { tend } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { mcp, type McpSession } from '../mcp/harness.js';
import { apiSandbox, sse, type ApiSandbox } from './harness.js';

const SECRET = 'hunter2secret';
const ENV_SECRET = 'supersecret123';
const enc = encodeURIComponent;

let api: ApiSandbox;
let ro: McpSession | null = null;
beforeAll(async () => {
  api = await apiSandbox({ loop: true });
});
afterAll(async () => {
  await ro?.close();
  await api.close();
});

describe('a reporter’s text', () => {
  it('is masked like arguments in the events API and MCP, and stored masked', async () => {
    const id = `${localComputer()}:ext/reporter`;
    expect((await api.admin('POST', '/api/routines', { id, external: true, at: '2099-01-01T00:00', tz: 'UTC', retry: 'none' })).status).toBe(200);
    const report = (action: string, message: string) => api.admin('POST', `/api/external/${enc(id)}/${action}`, { message });
    expect((await report('start', `connecting with password=${SECRET}`)).status).toBe(200);
    expect((await report('log', `sent Authorization: Bearer ${SECRET} then --token ${SECRET} and https://u:${SECRET}@db/x`)).status).toBe(200);
    expect((await report('fail', `db refused password=${SECRET}`)).status).toBe(200);

    const recent = await api.admin('GET', '/api/events/recent');
    const mine = (recent.json.value as { routineId: string | null; message: string }[]).filter((e) => e.routineId === id);
    expect(mine.map((e) => e.message)).toEqual(expect.arrayContaining([
      'running (reported by the routine): connecting with password=***',
      'sent Authorization: Bearer *** then --token *** and https://u:***@db/x',
      'failed: db refused password=***',
    ]));
    expect(recent.text).not.toContain(SECRET);
    // Stored masked: every other reader (the UI's event list, webhooks) reads these rows.
    const stored = api.engine.store.db.prepare(`SELECT message FROM events WHERE routine_id = ?`).pluck().all(id) as string[];
    expect(stored.join('\n')).not.toContain(SECRET);
    const run = (await api.admin('GET', `/api/routines/${enc(id)}`)).text;
    expect(run).toContain('db refused password=***');
    expect(run).not.toContain(SECRET);

    ro ??= await mcp(api.dir);
    for (const [tool, args] of [['failures', {}], ['routine', { id }], ['routines', {}]] as const) {
      const a = await ro.call(tool, args);
      expect(a.isError, a.text).toBe(false);
      expect(a.text, tool).not.toContain(SECRET);
    }
    expect((await ro.call('failures')).text).toContain('db refused password=***');
  });
});

describe("a routine's own output", () => {
  it('shows its secret argument and environment values as *** in tend logs, the log and follow routes and MCP; the file keeps them', async () => {
    const id = `${localComputer()}:api/leaky-output`;
    const script = 'echo "using $1 now"; echo "token is $API_TOKEN" >&2; echo "done"';
    const created = await api.admin('POST', '/api/routines', { id, at: '2099-01-01T00:00', tz: 'UTC', retry: 'none', command: 'sh', args: ['-c', script, 'x', `--password=${SECRET}`], env: { API_TOKEN: ENV_SECRET } });
    expect(created.status, created.text).toBe(200);
    const started = (await api.admin('POST', `/api/routines/${enc(id)}/run`)).json.value as { id: string };
    const run = await waitFor(async () => {
      const r = (await api.admin('GET', `/api/runs/${enc(started.id)}`)).json.value as { status: string; runDir: string | null };
      return r.status === 'COMPLETED' ? r : null;
    }, 20_000, 'the run to complete');

    const onDisk = readFileSync(join(run.runDir!, 'stdout.log'), 'utf8') + readFileSync(join(run.runDir!, 'stderr.log'), 'utf8');
    expect(onDisk).toContain(`using --password=${SECRET} now`);
    expect(onDisk).toContain(`token is ${ENV_SECRET}`);

    const out = (await api.admin('GET', `/api/runs/${enc(started.id)}/log`)).json.value.text as string;
    expect(out).toBe('using --password=*** now\ndone\n');
    const err = (await api.admin('GET', `/api/runs/${enc(started.id)}/log?stream=stderr`)).json.value.text as string;
    expect(err).toBe('token is ***\n');

    const follow = await sse(api.url, `/api/runs/${enc(started.id)}/log/follow?stream=stderr`, api.token);
    await follow.done;
    expect(follow.events.filter((e) => e.event === 'chunk').map((e) => JSON.parse(e.data) as string).join('')).toBe('token is ***\n');

    const cli = tend(api.dir, ['logs', id]);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toBe('using --password=*** now\ndone\n');
    const cliFollow = tend(api.dir, ['logs', id, '--stream', 'stderr', '--follow']);
    expect(cliFollow.stdout).toBe('token is ***\n');

    ro ??= await mcp(api.dir);
    const log = await ro.call('run_log', { id });
    expect(log.text).toContain('using --password=*** now');
    expect(log.text).not.toContain(SECRET);
  });
});
