import { EventStore } from './events.js';
import { HistoryStore } from './history.js';
import { JobStore } from './jobs.js';
import { LedgerStore } from './ledger.js';
import { PoolStore } from './workers.js';
import { RoutineStore } from './routines.js';
import { RunStore } from './runs.js';
import { writeTx } from './busy.js';
import { openDb, type DB, type OpenOptions } from './db.js';

/** The store: one SQLite file, one repository per concern, statements prepared once. */
export class Store {
  readonly routines: RoutineStore;
  readonly runs: RunStore;
  readonly jobs: JobStore;
  readonly ledger: LedgerStore;
  readonly events: EventStore;
  readonly pool: PoolStore;
  readonly history: HistoryStore;

  private readonly marks;

  constructor(readonly db: DB) {
    this.marks = { data: db.prepare(`PRAGMA data_version`).pluck(), changes: db.prepare(`SELECT total_changes()`).pluck() };
    this.routines = new RoutineStore(db);
    this.runs = new RunStore(db);
    this.jobs = new JobStore(db);
    this.ledger = new LedgerStore(db);
    this.events = new EventStore(db);
    this.pool = new PoolStore(db);
    this.history = new HistoryStore(db);
  }

  static open(path: string, opts?: OpenOptions): Store {
    return new Store(openDb(path, opts));
  }

  /**
   * Synchronous only: never await inside. Begins IMMEDIATE (as a writer): a deferred transaction
   * that reads then writes cannot take the write lock once another connection has committed, and
   * SQLite answers busy at once. Nested, it is a savepoint of the outer one.
   */
  tx<T>(fn: () => T): T {
    return writeTx(this.db, fn);
  }

  /**
   * A mark that moves whenever a row of the database changes: data_version moves when another
   * connection commits, total_changes() with every row this connection writes (a statement that
   * changed nothing, or a rollback, leaves it or moves it: never a change without a move). Equal
   * marks: a read taken at the first is still what the database holds.
   */
  changeMark(): string {
    return `${String(this.marks.data.get())}:${String(this.marks.changes.get())}`;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
