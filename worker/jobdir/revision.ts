// Source revision pinning: a routine may require its git working tree to be at a given commit and
// clean before it is launched. Shared with the remote worker agent.
import { execFile } from 'node:child_process';

const GIT_TIMEOUT_MS = 15_000;

interface GitResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

function git(cwd: string, args: string[]): Promise<GitResult> {
  return new Promise((resolvePromise) => {
    execFile(
      'git',
      args,
      {
        cwd,
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: 4 * 1024 * 1024,
        // Never take the index lock just to look (a concurrent git in the tree must not fail).
        env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C' },
      },
      (err, stdout, stderr) => {
        resolvePromise({ ok: !err, stdout: String(stdout), stderr: String(stderr || (err ? err.message : '')).trim() });
      },
    );
  });
}

/**
 * Null if `cwd` is a git working tree whose HEAD is `revision` (a full or abbreviated sha, or any
 * ref naming the same commit) and which has no changes, untracked files included; otherwise the
 * reason it may not be launched.
 */
export async function checkRevision(cwd: string | null, revision: string): Promise<string | null> {
  const wanted = revision.trim();
  if (wanted === '') return 'the pinned revision is empty';
  if (wanted.startsWith('-')) return `not a revision: ${wanted}`;
  if (!cwd) return `revision ${wanted} is pinned but the routine has no working directory`;

  const head = await git(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (!head.ok) {
    const inside = await git(cwd, ['rev-parse', '--is-inside-work-tree']);
    if (!inside.ok || inside.stdout.trim() !== 'true') return `${cwd} is not a git working tree${inside.stderr ? ` (${firstLine(inside.stderr)})` : ''}`;
    return `${cwd} has no commit checked out`;
  }
  const headSha = head.stdout.trim().toLowerCase();

  let matches = /^[0-9a-f]{4,64}$/i.test(wanted) && headSha.startsWith(wanted.toLowerCase());
  if (!matches) {
    const resolved = await git(cwd, ['rev-parse', '--verify', '--quiet', `${wanted}^{commit}`]);
    if (resolved.ok) matches = resolved.stdout.trim().toLowerCase() === headSha;
    else return `HEAD is ${headSha.slice(0, 12)} and the pinned revision ${wanted} is not a commit in this repository`;
    if (!matches) return `HEAD is ${headSha.slice(0, 12)} but the routine pins ${wanted} (${resolved.stdout.trim().slice(0, 12)})`;
  }

  const status = await git(cwd, ['status', '--porcelain', '--untracked-files=normal']);
  if (!status.ok) return `git status failed in ${cwd}: ${firstLine(status.stderr)}`;
  const changes = status.stdout.split('\n').filter((l) => l.trim() !== '');
  if (changes.length > 0) {
    const shown = changes.slice(0, 3).map((l) => l.trim()).join(', ');
    return `working tree ${cwd} is not clean (${changes.length} change${changes.length === 1 ? '' : 's'}: ${shown}${changes.length > 3 ? ', …' : ''})`;
  }
  return null;
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? '';
}
