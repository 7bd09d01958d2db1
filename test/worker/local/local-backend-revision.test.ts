// Pinned source revisions: a routine runs only from a clean working tree at the pinned commit.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRevision, createLocalBackend, type LocalBackend } from '../../../worker/local/index.js';
import { fixture, makeSpec, settle, tempDir, stopAll } from '../../helpers/local-job.js';

let data: ReturnType<typeof tempDir>;
let backend: LocalBackend;
let repo: string;
let first: string;
let second: string;

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Tend Test',
  GIT_AUTHOR_EMAIL: 'tend@example.invalid',
  GIT_COMMITTER_NAME: 'Tend Test',
  GIT_COMMITTER_EMAIL: 'tend@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: repo, env: gitEnv, encoding: 'utf8' }).trim();
}

beforeAll(() => {
  data = tempDir();
  backend = createLocalBackend({ dataDir: data.path, tendVersion: 't' });
  repo = join(data.path, 'repo');
  mkdirSync(repo);
  git('init', '--quiet');
  writeFileSync(join(repo, 'code.txt'), 'v1\n');
  git('add', 'code.txt');
  git('commit', '--quiet', '-m', 'first');
  first = git('rev-parse', 'HEAD');
  git('tag', 'v1');
  writeFileSync(join(repo, 'code.txt'), 'v2\n');
  git('commit', '--quiet', '-am', 'second');
  second = git('rev-parse', 'HEAD');
});
afterAll(async () => {
  await stopAll(backend, data.path);
  data.remove();
});

describe('checkRevision', () => {
  it('accepts a clean tree at the pinned commit: full sha, abbreviated sha, or a ref naming it', async () => {
    expect(await checkRevision(repo, second)).toBeNull();
    expect(await checkRevision(repo, second.slice(0, 7))).toBeNull();
    expect(await checkRevision(repo, second.slice(0, 7).toUpperCase())).toBeNull();
    expect(await checkRevision(repo, 'HEAD')).toBeNull();
  });

  it('refuses another commit, naming both', async () => {
    const reason = await checkRevision(repo, first.slice(0, 10));
    expect(reason).toContain(second.slice(0, 12));
    expect(reason).toContain(`pins ${first.slice(0, 10)}`);
    expect(await checkRevision(repo, 'v1')).toMatch(/pins v1/);
    expect(await checkRevision(repo, 'no-such-branch')).toMatch(/not a commit/);
    expect(await checkRevision(repo, '--output=/tmp/x')).toMatch(/not a revision/);
  });

  it('refuses a dirty tree: modified or untracked files', async () => {
    writeFileSync(join(repo, 'code.txt'), 'edited\n');
    try {
      expect(await checkRevision(repo, second)).toMatch(/not clean \(1 change: M code\.txt\)/);
    } finally {
      git('checkout', '--', 'code.txt');
    }
    writeFileSync(join(repo, 'stray.txt'), 'x');
    try {
      expect(await checkRevision(repo, second)).toMatch(/not clean.*stray\.txt/);
    } finally {
      git('clean', '-fq');
    }
    expect(await checkRevision(repo, second)).toBeNull();
  });

  it('refuses a directory that is not a git working tree, or no directory at all', async () => {
    const plain = join(data.path, 'plain');
    mkdirSync(plain, { recursive: true });
    expect(await checkRevision(plain, second)).toMatch(/not a git working tree/);
    expect(await checkRevision(null, second)).toMatch(/no working directory/);
  });
});

describe('submit with a pinned revision', () => {
  it('launches from a clean tree at the pinned commit', async () => {
    const spec = makeSpec(data.path, { command: fixture('exit0.sh'), cwd: repo, revision: second.slice(0, 8) });
    expect(await settle(backend, await backend.submit(spec))).toMatchObject({ exitCode: 0, reason: null });
  });

  it('refuses to launch anything from a wrong commit or a dirty tree: LAUNCH_REFUSED', async () => {
    const wrong = makeSpec(data.path, { command: fixture('exit0.sh'), cwd: repo, revision: first });
    await expect(backend.submit(wrong)).rejects.toThrow(/^LAUNCH_REFUSED: HEAD is /);
    expect(existsSync(wrong.runDir)).toBe(false);

    writeFileSync(join(repo, 'code.txt'), 'edited\n');
    try {
      const dirty = makeSpec(data.path, { command: fixture('exit0.sh'), cwd: repo, revision: second });
      await expect(backend.submit(dirty)).rejects.toMatchObject({ code: 'REFUSED', message: expect.stringMatching(/^LAUNCH_REFUSED: working tree .* is not clean/) });
      expect(existsSync(dirty.runDir)).toBe(false);
    } finally {
      git('checkout', '--', 'code.txt');
    }
  });
});
