// Paths and ids mean what a shell user expects: a routine added without --cwd runs where
// `routine add` ran (so `-- ./download.sh` is the script beside you), a schedule file's paths are
// relative to the file, and files take the short ids the CLI takes.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killTracked, scratch, tend, tendOk } from '../helpers/cli.js';
import { Daemon, stopOwner } from '../helpers/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { localComputer } from '../../main/engine/domain/schema.js';

const here = localComputer();
interface Shown { id: string; definition: { cwd: string | null; computer: string; dependencies: string[] } }
let box: ReturnType<typeof scratch>;
let data: string;
let project: string;
beforeEach(() => {
  box = scratch('tend-paths-');
  data = join(box.dir, 'data');
  project = join(box.dir, 'project');
  mkdirSync(join(project, 'sub'), { recursive: true });
});
afterEach(async () => {
  await stopOwner(data);
  await killTracked();
  box.remove();
});

const cliIn = (cwd: string, args: string[]) => tend(data, args, {}, { cwd });

describe('routine add: the working directory', () => {
  it('without --cwd is the directory routine add ran in, shown by routine show', () => {
    const r = cliIn(project, ['routine', 'add', 'reports/download', '--runtimes', '07:00', '--', './download.sh']);
    expect(r.code, r.stderr).toBe(0);
    const d = tendOk<Shown>(data, ['routine', 'show', 'reports/download', '--json']);
    expect(d.definition.cwd).toBe(project);
    expect(tendOk<string>(data, ['routine', 'show', 'reports/download'])).toContain(`cwd:      ${project}`);
  });

  it('a relative --cwd is relative to where tend runs; another host needs an absolute one', () => {
    expect(cliIn(project, ['routine', 'add', 'a/b', '--every', '1h', '--cwd', 'sub', '--', 'true']).code).toBe(0);
    expect(tendOk<Shown>(data, ['routine', 'show', 'a/b', '--json']).definition.cwd).toBe(join(project, 'sub'));
    const remote = cliIn(project, ['routine', 'add', 'bob@gpu:train', '--every', '1h', '--cwd', 'sub', '--', 'true']);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('--cwd: a relative directory is one of this host');
    expect(cliIn(project, ['routine', 'add', 'bob@gpu:train', '--every', '1h', '--', 'true']).code).toBe(0);
    expect(tendOk<Shown>(data, ['routine', 'show', 'bob@gpu:train', '--json']).definition.cwd).toBeNull();
  });

  it('edit --cwd with a relative path resolves it where edit runs', () => {
    cliIn(project, ['routine', 'add', 'a/b', '--every', '1h', '--', 'true']);
    expect(cliIn(join(project, 'sub'), ['routine', 'edit', 'a/b', '--cwd', '..']).code).toBe(0);
    expect(tendOk<Shown>(data, ['routine', 'show', 'a/b', '--json']).definition.cwd).toBe(project);
  });

  it('the README’s first example runs: ./download.sh beside where it was added', async () => {
    writeFileSync(join(project, 'download.sh'), '#!/bin/sh\necho downloaded in "$(pwd)"\n');
    chmodSync(join(project, 'download.sh'), 0o755);
    expect(cliIn(project, ['routine', 'add', 'reports/download', '--runtimes', '07:00', '--', './download.sh']).code).toBe(0);
    await new Daemon(data).ready();
    tendOk(data, ['routine', 'run', 'reports/download', '--no-wait']);
    const today = () => tendOk<{ today: string | null }>(data, ['routine', 'show', 'reports/download', '--json']).today;
    await waitFor(() => today() === 'COMPLETED' || today() === 'ERROR', 30_000, 'the run to end', 200);
    expect(today()).toBe('COMPLETED');
    expect(tendOk<string>(data, ['logs', 'reports/download'])).toContain(`downloaded in ${project}`);
  });
});

describe('schedule files: paths and short ids', () => {
  it('a relative cwd is relative to the file; without one a routine of this host runs beside the file', () => {
    writeFileSync(
      join(project, 'etl.yaml'),
      ['schedule: etl', 'routines:', '  - id: etl/download', '    command: ./download.sh', '    every: 1h', '  - id: etl/parse', '    command: ./parse.sh', '    cwd: sub', '    every: 1h', '    after: [etl/download]', ''].join('\n'),
    );
    const r = cliIn(box.dir, ['schedule', 'import', 'project/etl.yaml', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(tendOk<Shown>(data, ['routine', 'show', `${here}:etl/download`, '--json']).definition.cwd).toBe(project);
    const parse = tendOk<Shown>(data, ['routine', 'show', `${here}:etl/parse`, '--json']);
    expect(parse.definition.cwd).toBe(join(project, 'sub'));
    expect(parse.definition.dependencies).toEqual([`${here}:etl/download`]);
  });

  it('short ids are completed with the file’s computer; that host’s paths stay its own', () => {
    writeFileSync(
      join(project, 'gpu.yaml'),
      ['schedule: gpu', 'computer: bob@gpu', 'routines:', '  - id: train/nightly', '    command: ./train.sh', '    cron: "0 2 * * *"', '  - id: train/eval', '    command: ./eval.sh', '    cwd: /srv/eval', '    cron: "0 4 * * *"', '    after: [train/nightly]', ''].join('\n'),
    );
    expect(cliIn(project, ['schedule', 'import', 'gpu.yaml']).code).toBe(0);
    const nightly = tendOk<Shown>(data, ['routine', 'show', 'bob@gpu:train/nightly', '--json']);
    expect(nightly.definition.computer).toBe('bob@gpu');
    expect(nightly.definition.cwd).toBeNull();
    const evalR = tendOk<Shown>(data, ['routine', 'show', 'bob@gpu:train/eval', '--json']);
    expect(evalR.definition.cwd).toBe('/srv/eval');
    expect(evalR.definition.dependencies).toEqual(['bob@gpu:train/nightly']);
  });

  it('a relative cwd for another host is refused, naming the field', () => {
    writeFileSync(join(project, 'bad.yaml'), ['schedule: bad', 'computer: bob@gpu', 'routines:', '  - id: x/y', '    command: ./x.sh', '    cwd: sub', '    every: 1h', ''].join('\n'));
    const r = cliIn(project, ['schedule', 'import', 'bad.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('routines.0.cwd: must be an absolute path');
  });
});
