// A command loads what it runs: `tend daemon status` neither the other command modules nor zod
// (validation) nor the engine; help still lists every command.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, childEnv, scratch, TEND } from '../helpers/cli.js';
import { fixture } from '../helpers/local-job.js';

let data: ReturnType<typeof scratch>;
beforeAll(() => {
  assertBuilt();
  data = scratch('tend-lazy-');
});
afterAll(() => data.remove());

function modulesOf(args: string[]): { modules: string[]; stdout: string } {
  // The CLI bundle is CommonJS: its chunks are required; an ES module among them would be imported.
  const r = spawnSync(process.execPath, ['--import', fixture('list-modules.mjs'), '-r', fixture('list-required.cjs'), TEND, ...args], { env: childEnv(data.dir), encoding: 'utf8' });
  const modules = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('module ') || l.startsWith('required '))
    .map((l) => l.slice(l.indexOf(' ') + 1));
  return { modules, stdout: r.stdout };
}

describe('lazy command modules', () => {
  it('daemon status --json loads the daemon command alone, no zod, no engine', () => {
    const { modules, stdout } = modulesOf(['daemon', 'status', '--json']);
    expect(JSON.parse(stdout)).toMatchObject({ healthy: false, owner: null });
    const commands = modules.filter((m) => m.includes('/cli/commands/')).map((m) => m.replace(/.*\/cli\/commands\//, ''));
    expect(commands).toEqual(['daemon.js']);
    expect(modules.filter((m) => m.includes('/node_modules/zod/'))).toEqual([]);
    // tsc's modules, or the CLI bundle's chunk of the daemon (engine, scheduler and Fastify in one).
    expect(modules.filter((m) => /\/engine\/(engine\.js|scheduler\/|daemon\/run\.js)/.test(m) || m.includes('/node_modules/fastify/'))).toEqual([]);
    expect(modules.some((m) => m.includes('/dist/main/cli/chunks/'))).toBe(true);
  });

  it('--help still lists every command', () => {
    const { modules, stdout } = modulesOf(['--help']);
    for (const c of ['routine', 'logs', 'heartbeat', 'schedule', 'job', 'daemon', 'service', 'worker', 'report', 'next', 'mcp', 'webhook']) expect(stdout).toMatch(new RegExp(`^\\s+${c}\\b`, 'm'));
    expect(modules.filter((m) => m.includes('/cli/commands/')).length).toBe(12);
  });
});
