// A daemon whose data dir is deleted or replaced under it (rm -rf, a restore that moves a copy
// into place) would run on against unlinked files: its open database and pidfile are no longer
// what the path names, and another daemon may claim the new directory. Each pass compares the
// identity (device and inode) of the dir and of tend.db with what was opened.
import { statSync } from 'node:fs';
import { paths } from '../datadir.js';

export interface DataDirIdentity {
  dir: string;
  db: string;
}

function identity(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

export function dataDirIdentity(dataDir: string): DataDirIdentity {
  return { dir: identity(dataDir) ?? '', db: identity(paths(dataDir).db) ?? '' };
}

/** Why the data dir is no longer the one opened, or null while it is. */
export function dataDirChange(dataDir: string, was: DataDirIdentity): string | null {
  const dir = identity(dataDir);
  if (dir === null) return `the data dir ${dataDir} was deleted`;
  if (dir !== was.dir) return `the data dir ${dataDir} was replaced by another directory`;
  const db = identity(paths(dataDir).db);
  if (db === null) return `the database ${paths(dataDir).db} was deleted`;
  if (was.db !== '' && db !== was.db) return `the database ${paths(dataDir).db} was replaced by another file`;
  return null;
}
