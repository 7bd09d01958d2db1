// Secrets given to a routine or a job never appear in any CLI output, human or JSON.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbSnapshot } from './db-snapshot.js';
import { cliSandbox, runCli, type CliResult } from './run-cli.js';

const SECRET = 'hunter2';

let cli: ReturnType<typeof cliSandbox>;
const outputs: { args: string[]; r: CliResult }[] = [];

/** Runs a command, keeps its output for the sweep below, expects success. */
function run(...args: string[]): CliResult {
  const r = cli.tend(...args);
  outputs.push({ args, r });
  expect(r.code, `tend ${args.join(' ')}\n${r.stderr}`).toBe(0);
  return r;
}

/** A definition as stored, read from the database itself. */
function storedDef(id: string): { args: string[]; env: Record<string, string> } {
  const row = (dbSnapshot(cli.dir).routines as { id: string; def: string }[]).find((r) => r.id === id);
  if (!row) throw new Error(`${id} not stored`);
  return JSON.parse(row.def) as { args: string[]; env: Record<string, string> };
}

beforeAll(() => {
  cli = cliSandbox();
  run('routine', 'add', 'me@box:dl', '--every', '1h', '--env', `TOKEN=${SECRET}`, '--env', 'LANG=C', '--json', '--', './dl.sh', `--password=${SECRET}`, '--api-key', SECRET, '--verbose');
  run('routine', 'add', 'me@box:rt', '--realtime', '--', './collect.sh', `https://bob:${SECRET}@feed.example.com/?token=${SECRET}`);
  run('routine', 'edit', 'me@box:dl', '--timeout', '5m', '--json');
  run('job', 'post', '--json', '--', 'curl', `--password=${SECRET}`, 'https://example.com');
  run('job', 'post', '--json', '--name', 'upload', '--', 'upload.sh', '--api-key', SECRET);
});
afterAll(() => cli.remove());

describe('secret masking in CLI output', () => {
  it('list, show and export (human and --json) succeed (their output is swept below)', () => {
    for (const args of [
      ['routine', 'list'],
      ['routine', 'list', '--json'],
      ['routine', 'show', 'me@box:dl'],
      ['routine', 'show', 'me@box:dl', '--json'],
      ['routine', 'show', 'me@box:rt', '--json'],
      ['schedule', 'export'],
      ['schedule', 'export', 'default'],
      ['job', 'list'],
      ['job', 'list', '--json'],
      ['job', 'show', '1'],
      ['job', 'show', '1', '--json'],
      ['job', 'show', '2', '--json'],
      ['routine', 'pause', 'me@box:dl', '--json'],
      ['routine', 'resume', 'me@box:dl', '--json'],
    ]) {
      run(...args);
    }
  });

  it('the masked forms are what is shown', () => {
    const d = cli.ok<{ definition: { args: string[]; env: Record<string, string> } }>('routine', 'show', 'me@box:dl', '--json');
    expect(d.definition.args).toEqual(['--password=***', '--api-key', '***', '--verbose']);
    expect(d.definition.env).toEqual({ TOKEN: '***', LANG: 'C' });
    const rt = cli.ok<{ definition: { args: string[] } }>('routine', 'show', 'me@box:rt', '--json');
    expect(rt.definition.args).toEqual(['https://bob:***@feed.example.com/?token=***']);
    const jobs = cli.ok<{ id: number; name: string; args: string[] }[]>('job', 'list', '--json');
    expect(jobs.find((j) => j.id === 1)).toMatchObject({ name: 'curl --password=*** https://example.com', args: ['--password=***', 'https://example.com'] });
    expect(jobs.find((j) => j.id === 2)).toMatchObject({ name: 'upload', args: ['--api-key', '***'] });
  });

  it('refusals do not echo secrets either', () => {
    for (const args of [
      ['routine', 'add', 'me@box:bad', '--every', '0s', '--env', `TOKEN=${SECRET}`, '--', 'x', `--password=${SECRET}`],
      ['routine', 'edit', 'me@box:dl', '--env', `TOKEN=${SECRET}`, '--after', 'me@box:ghost'],
      ['job', 'post', '--after', '99', '--', 'curl', `--password=${SECRET}`],
    ]) {
      const r = cli.tend(...args);
      expect(r.code).toBe(2);
      outputs.push({ args, r });
    }
  });

  it('no output of any command above contains the secret', () => {
    expect(outputs.length).toBeGreaterThan(10);
    for (const { args, r } of outputs) {
      expect(r.stdout, `stdout of tend ${args.join(' ')}`).not.toContain(SECRET);
      expect(r.stderr, `stderr of tend ${args.join(' ')}`).not.toContain(SECRET);
    }
  });

  it('the store keeps the real values (masking is for output only)', () => {
    expect(storedDef('me@box:dl')).toMatchObject({ args: [`--password=${SECRET}`, '--api-key', SECRET, '--verbose'], env: { TOKEN: SECRET, LANG: 'C' } });
  });

  it('re-importing an export keeps the stored secrets instead of writing *** over them', () => {
    const file = join(cli.dir, 'export.yaml');
    writeFileSync(file, cli.ok<string>('schedule', 'export', 'default'));
    expect(readFileSync(file, 'utf8')).not.toContain(SECRET);
    const res = cli.ok<{ unchanged: string[]; updated: string[] }[]>('schedule', 'import', file, '--json');
    expect(res[0]!.updated).toEqual([]);
    expect([...res[0]!.unchanged].sort()).toEqual(['me@box:dl', 'me@box:rt']);
    expect(storedDef('me@box:dl')).toMatchObject({ args: [`--password=${SECRET}`, '--api-key', SECRET, '--verbose'], env: { TOKEN: SECRET, LANG: 'C' } });
    expect(storedDef('me@box:rt')).toMatchObject({ args: [`https://bob:${SECRET}@feed.example.com/?token=${SECRET}`] });
  });

  it('importing an export into another data dir refuses every *** with its path and how to give the secret; nothing changes', () => {
    const file = join(cli.dir, 'export-other.yaml');
    writeFileSync(file, cli.ok<string>('schedule', 'export', 'default'));
    const other = cliSandbox();
    try {
      const r = other.tend('schedule', 'import', file, '--json');
      expect(r.code).toBe(2);
      const paths = [...r.stderr.matchAll(/routines\.\d+\.(args\.\d+|env\.\w+)/g)].map((m) => m[0]);
      // dl: --password=***, --api-key ***, TOKEN; rt: the URL's password and token.
      expect(new Set(paths).size).toBe(4);
      expect(r.stderr).toMatch(/routines\.\d+\.args\.0: holds a masked secret \(\*\*\*\)/);
      expect(r.stderr).toContain('"--password=${env:SECRET}"');
      expect(r.stderr).toContain('"${env:TOKEN}"');
      expect(other.ok<unknown[]>('routine', 'list', '--json')).toEqual([]);

      // With the secrets referenced from the importer's environment, the real values are stored.
      const fixed = readFileSync(file, 'utf8').replaceAll('--password=***', '--password=${env:PW}').replace('"***"', '"${env:PW}"').replace('TOKEN: "***"', 'TOKEN: "${env:PW}"').replace("TOKEN: '***'", "TOKEN: '${env:PW}'").replace('bob:***@', 'bob:${env:PW}@').replace('token=***', 'token=${env:PW}');
      const fixedFile = join(cli.dir, 'export-fixed.yaml');
      writeFileSync(fixedFile, fixed);
      const unset = other.tend('schedule', 'import', fixedFile);
      expect(unset.code).toBe(2);
      expect(unset.stderr).toContain('environment variable PW is not set');
      const ok = runCli(['schedule', 'import', fixedFile, '--json'], { dataDir: other.dir, env: { PW: SECRET } });
      expect(ok.code, ok.stderr + fixed).toBe(0);
      const stored = (dbSnapshot(other.dir).routines as { id: string; def: string }[]).map((x) => JSON.parse(x.def) as { id: string; args: string[]; env: Record<string, string> });
      expect(stored.find((d) => d.id === 'me@box:dl')).toMatchObject({ args: [`--password=${SECRET}`, '--api-key', SECRET, '--verbose'], env: { TOKEN: SECRET, LANG: 'C' } });
    } finally {
      other.remove();
    }
  });
});
