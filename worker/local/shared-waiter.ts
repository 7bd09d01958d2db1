// run.sh as a hard link to one copy of the waiter that every local job of a data dir shares
// (`<data>/runs/.waiters/<hash>.sh`, written once per text): a link per job instead of writing a
// file (creating files was the costliest part of a launch: profiled, 300 no-op jobs drained by a
// daemon). The shared text finds its places when it runs (wrapper.ts, WrapperParams): its job
// directory from its own path, its working directory from TEND_WAITER_WORKDIR.
import { existsSync, linkSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processProvider } from '../jobdir/proc.js';
import { sharedWrapperScript, type WaiterTools } from './tools.js';

/** The variable the shared waiter reads its working directory from (the routine does not get it). */
export const WAITER_WORKDIR = 'TEND_WAITER_WORKDIR';

const texts = new Map<string, string>();

/** The shared waiter's text for these tools and grace (made once: it is the same for every job). */
export function sharedWaiterText(tools: WaiterTools | undefined, leftoverGraceMs: number | undefined): string {
  const key = `${tools?.perlSetsid ?? false}|${leftoverGraceMs}|${processProvider().name}|${process.umask()}`;
  let text = texts.get(key);
  if (text === undefined) texts.set(key, (text = sharedWrapperScript(tools, leftoverGraceMs)));
  return text;
}

/** Shared copies this process wrote, by directory and text. */
const written = new Map<string, string>();

/**
 * Make `script` (a job's run.sh) the shared waiter of `text`, kept in `dir`. Over a run.sh an
 * interrupted launch left, a new directory entry (link to a temp name, renamed): a wrapper of that
 * launch may still be reading the old file. Where hard links cannot be made, the job gets a copy.
 */
export function placeWaiter(dir: string, script: string, text: string, again = true): void {
  const key = `${dir}\0${text}`;
  const shared = sharedCopy(dir, text);
  try {
    linkSync(shared, script);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && again) {
      // The shared copy was removed since (the data dir's runs were cleared): write it again.
      written.delete(key);
      return placeWaiter(dir, script, text, false);
    }
    if (code === 'EEXIST') {
      const tmp = `${script}.${process.pid}.tmp`;
      rmSync(tmp, { force: true });
      try {
        linkSync(shared, tmp);
        renameSync(tmp, script);
        return;
      } catch {
        // fall through to a copy
      }
    }
  }
  writeNew(script, text);
}

/** The copy of `text` kept in `dir` (`<hash>.<ext>`), written the first time this process asks. */
export function sharedCopy(dir: string, text: string, check = false, ext = 'sh'): string {
  const key = `${dir}\0${text}`;
  let shared = written.get(key);
  // `check`: written once, but the data dir's runs may have been cleared since.
  if (shared === undefined || (check && !existsSync(shared))) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // node:crypto with its first use: an idle daemon need not hold it (main/engine/lazy-crypto.ts).
    shared = join(dir, `${process.getBuiltinModule('node:crypto').createHash('sha256').update(text).digest('hex').slice(0, 16)}.${ext}`);
    writeNew(shared, text);
    written.set(key, shared);
  }
  return shared;
}

/** Written through a temp name and a rename, owner-only and executable. */
function writeNew(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o700 });
  renameSync(tmp, path);
}
