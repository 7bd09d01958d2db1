// Promised outputs: paths or globs relative to the job's working directory, each of which must
// match at least one existing file or directory once the job exits 0. Globs support `*`, `?`,
// `[…]` within one path segment and `**` for any number of directories.
import { readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';

const GLOB_CHARS = /[*?[]/;

function segmentRegex(segment: string): RegExp {
  let re = '';
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i] as string;
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else if (ch === '[') {
      const end = segment.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = segment.slice(i + 1, end).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body}]`;
        i = end;
      }
    } else re += ch.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Does anything under `dir` match the remaining glob segments? Stops at the first match. */
function matchFrom(dir: string, segments: string[]): boolean {
  if (segments.length === 0) return exists(dir);
  const [head, ...rest] = segments as [string, ...string[]];
  if (head === '**') {
    if (matchFrom(dir, rest)) return true;
    for (const name of listDir(dir)) {
      const child = join(dir, name);
      if (isDir(child) && matchFrom(child, segments)) return true;
    }
    return false;
  }
  if (!GLOB_CHARS.test(head)) return matchFrom(join(dir, head), rest);
  const re = segmentRegex(head);
  for (const name of listDir(dir)) {
    if (name.startsWith('.') && !head.startsWith('.')) continue;
    if (re.test(name) && matchFrom(join(dir, name), rest)) return true;
  }
  return false;
}

/** True if `pattern` (a path or glob, relative to `cwd` unless absolute) matches something. */
export function outputPresent(cwd: string, pattern: string): boolean {
  if (!GLOB_CHARS.test(pattern)) return exists(resolve(cwd, pattern));
  const root = isAbsolute(pattern) ? sep : cwd;
  const segments = pattern.split('/').filter((s) => s !== '' && s !== '.');
  return matchFrom(root, segments);
}

/** The promised outputs that are missing, in the order promised. */
export function missingOutputs(cwd: string, outputs: readonly string[]): string[] {
  return outputs.filter((p) => !outputPresent(cwd, p));
}
