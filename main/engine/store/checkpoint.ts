// The WAL checkpoint of the engine's connection, out of the pass. SQLite checkpoints in the commit
// that takes the WAL past wal_autocheckpoint pages (1,000): one pass in five or six at 10k routines
// with 100 due paid for copying the WAL into tend.db and syncing both files. The engine turns that
// off on its own connection while its loop runs and checkpoints between passes instead, as often as
// SQLite would have (once as many pages wait), PASSIVE: it never waits for another connection's
// reader or writer. Other connections (the CLI) keep SQLite's default: one whose commit takes the
// WAL past the limit checkpoints it, as before.
import { closeSync, openSync, readSync } from 'node:fs';
import os from 'node:os';
import type { DB } from './db.js';

/** Pages waiting in the WAL that make a checkpoint due: SQLite's own wal_autocheckpoint default. */
export const CHECKPOINT_PAGES = 1000;

/**
 * The wal-index header at the start of `-shm` (https://www.sqlite.org/walformat.html, a format every
 * SQLite version sharing the file relies on, in the host's byte order): two copies of 48 bytes, the
 * second written last, then the checkpoint info. mxFrame: the WAL's last valid frame; nBackfill:
 * the frames already copied into the database.
 */
const HEADER = 48;
const VERSION = 0;
const IS_INIT = 12;
const MX_FRAME = 16;
const N_BACKFILL = 2 * HEADER;
const WAL_INDEX_VERSION = 3007000;

export interface CheckpointResult {
  /** Frames in the WAL, and how many of them are now in the database (SQLite's answer). */
  log: number;
  checkpointed: number;
}

export class WalCheckpoints {
  /** The -shm file, opened at the first look (undefined: not yet; null: it cannot be). */
  private shm: number | null | undefined;
  private owned = false;
  private readonly header = Buffer.alloc(N_BACKFILL + 4);

  constructor(
    private readonly db: DB,
    private readonly pages = CHECKPOINT_PAGES,
  ) {}

  /** Whether the checkpoint is this object's to run (between `own` and `release`). */
  get owning(): boolean {
    return this.owned;
  }

  /** Take the checkpoint over from the connection's commits. A database without a WAL has none to take. */
  own(): void {
    if (this.owned || !this.walMode()) return;
    this.db.pragma('wal_autocheckpoint = 0');
    this.owned = true;
  }

  /**
   * Frames of the WAL not yet copied into the database; null when the wal-index cannot be read or
   * is being rewritten (its two copies differ).
   */
  waiting(): number | null {
    if (this.shm === undefined) this.shm = this.db.memory ? null : openOrNull(`${this.db.name}-shm`);
    // Unreadable: every step checkpoints (one with nothing to copy costs no sync).
    if (this.shm === null) return null;
    const h = this.header;
    try {
      if (readSync(this.shm, h, 0, h.length, 0) < h.length) return null;
    } catch {
      return null;
    }
    if (h.compare(h, 0, HEADER, HEADER, 2 * HEADER) !== 0 || h[IS_INIT] !== 1) return null;
    const le = os.endianness() === 'LE';
    const u32 = (at: number) => (le ? h.readUInt32LE(at) : h.readUInt32BE(at));
    if (u32(VERSION) !== WAL_INDEX_VERSION) return null;
    return Math.max(0, u32(MX_FRAME) - u32(N_BACKFILL));
  }

  /** Between passes: a PASSIVE checkpoint once `pages` wait (or when that cannot be told). Null when none ran. */
  step(): CheckpointResult | null {
    if (!this.owned) return null;
    const waiting = this.waiting();
    if (waiting !== null && waiting < this.pages) return null;
    return this.checkpoint();
  }

  /** Give the checkpoint back to the connection's commits, after a last one of what the WAL holds. */
  release(): void {
    if (!this.owned) return;
    this.owned = false;
    this.close();
    if (!this.db.open) return;
    this.checkpoint();
    this.db.pragma(`wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
  }

  /** Close the -shm file this looks at (opened again by the next look). */
  close(): void {
    if (typeof this.shm === 'number') closeSync(this.shm);
    this.shm = undefined;
  }

  private checkpoint(): CheckpointResult {
    const [r] = this.db.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
    return { log: r!.log, checkpointed: r!.checkpointed };
  }

  private walMode(): boolean {
    return !this.db.memory && !this.db.readonly && this.db.pragma('journal_mode', { simple: true }) === 'wal';
  }
}

function openOrNull(path: string): number | null {
  try {
    return openSync(path, 'r');
  } catch {
    return null;
  }
}
