// Numbered migrations on PRAGMA user_version. Append only: a shipped migration never changes.
// Each runs in its own transaction; the version is bumped inside it.

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

// Migration 5's duration histogram: fixed here (a shipped migration never changes), one column per bucket.
const V5_BOUNDS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200, 86_400];
const V5_BUCKETS = V5_BOUNDS.map((_, i) => `b${i}`).concat(`b${V5_BOUNDS.length}`);
const V5_TERMINAL = `('COMPLETED', 'ERROR', 'CANCELLED', 'EXITED', 'STOPPED')`;
const v5Bucket = (d: string) => `CASE ${V5_BOUNDS.map((b, i) => `WHEN ${d} <= ${b} THEN ${i}`).join(' ')} ELSE ${V5_BOUNDS.length} END`;

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    description: 'the whole domain: schedules, routines, triggers, runs, jobs, ledger, leases, events, commands, workers, remote reports',
    sql: `
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE schedules (
  name         TEXT PRIMARY KEY,
  mode         TEXT NOT NULL DEFAULT 'active' CHECK (mode IN ('active', 'observe')),
  max_parallel INTEGER CHECK (max_parallel IS NULL OR max_parallel > 0),
  created_at   INTEGER NOT NULL
) STRICT;

CREATE TABLE routines (
  id         TEXT PRIMARY KEY,
  schedule   TEXT NOT NULL REFERENCES schedules(name) ON UPDATE CASCADE,
  name       TEXT NOT NULL,
  computer   TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('batch', 'realtime')),
  external   INTEGER NOT NULL DEFAULT 0 CHECK (external IN (0, 1)),
  def        TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX routines_schedule ON routines(schedule, seq);

CREATE TABLE routine_deps (
  routine_id TEXT NOT NULL REFERENCES routines(id) ON DELETE CASCADE,
  depends_on TEXT NOT NULL,
  PRIMARY KEY (routine_id, depends_on)
) STRICT;
CREATE INDEX routine_deps_reverse ON routine_deps(depends_on);

CREATE TABLE triggers (
  routine_id    TEXT PRIMARY KEY REFERENCES routines(id) ON DELETE CASCADE,
  state         TEXT NOT NULL CHECK (state IN ('scheduled', 'paused', 'fired', 'failed', 'cancelled')),
  next_run_at   INTEGER,
  first_due_at  INTEGER,
  last_fired_at INTEGER,
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT,
  last_error_at INTEGER,
  fail_count    INTEGER NOT NULL DEFAULT 0,
  updated_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX triggers_due ON triggers(next_run_at) WHERE state = 'scheduled';

-- Runs keep no foreign key to routines: history and in-flight work outlive a removed definition.
CREATE TABLE runs (
  id           TEXT PRIMARY KEY,
  routine_id   TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('batch', 'realtime')),
  cycle        TEXT NOT NULL,
  scheduled_at INTEGER NOT NULL,
  attempt      INTEGER NOT NULL DEFAULT 1,
  status       TEXT NOT NULL,
  reason       TEXT,
  exit_code    INTEGER,
  signal       TEXT,
  backend      TEXT,
  run_dir      TEXT,
  manual       INTEGER NOT NULL DEFAULT 0,
  not_before   INTEGER,
  created_at   INTEGER NOT NULL,
  started_at   INTEGER,
  ended_at     INTEGER,
  heartbeat_at INTEGER
) STRICT;
CREATE INDEX runs_routine ON runs(routine_id, scheduled_at);
CREATE INDEX runs_cycle ON runs(cycle, routine_id);
CREATE INDEX runs_active ON runs(status) WHERE status IN ('PENDING', 'DELAYED', 'STARTING', 'RUNNING');

CREATE TABLE jobs (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT NOT NULL,
  command    TEXT NOT NULL,
  args       TEXT NOT NULL DEFAULT '[]',
  cwd        TEXT,
  env        TEXT NOT NULL DEFAULT '{}',
  computer   TEXT,
  backend    TEXT,
  status     TEXT NOT NULL CHECK (status IN ('WAITING', 'PENDING', 'FETCHED', 'RUNNING', 'COMPLETED', 'ERROR', 'CANCEL')),
  reason     TEXT,
  exit_code  INTEGER,
  signal     TEXT,
  run_dir    TEXT,
  fetched_by TEXT,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  ended_at   INTEGER,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX jobs_status ON jobs(status, id);

CREATE TABLE job_deps (
  job_id     INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  depends_on INTEGER NOT NULL REFERENCES jobs(id),
  PRIMARY KEY (job_id, depends_on)
) STRICT;
CREATE INDEX job_deps_reverse ON job_deps(depends_on);

-- Every submitted handle, written at the submit boundary before anything polls it.
CREATE TABLE ledger (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  kind         TEXT NOT NULL CHECK (kind IN ('run', 'job')),
  ref_id       TEXT NOT NULL,
  backend      TEXT NOT NULL,
  handle       TEXT NOT NULL,
  submitted_at INTEGER NOT NULL,
  UNIQUE (kind, ref_id)
) STRICT;

CREATE TABLE leases (
  queue      TEXT NOT NULL,
  item_id    TEXT NOT NULL,
  owner      TEXT NOT NULL,
  claimed_at INTEGER NOT NULL,
  PRIMARY KEY (queue, item_id)
) STRICT;
CREATE INDEX leases_age ON leases(claimed_at);

CREATE TABLE events (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  type       TEXT NOT NULL,
  level      TEXT NOT NULL CHECK (level IN ('info', 'warn', 'error')),
  routine_id TEXT,
  run_id     TEXT,
  job_id     INTEGER,
  message    TEXT NOT NULL,
  data       TEXT
) STRICT;
CREATE INDEX events_at ON events(at);
CREATE INDEX events_routine ON events(routine_id, id) WHERE routine_id IS NOT NULL;

CREATE TABLE commands (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  computer   TEXT NOT NULL,
  kind       TEXT NOT NULL,
  payload    TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  fetched_at INTEGER,
  fate       TEXT NOT NULL DEFAULT 'queued' CHECK (fate IN ('queued', 'fetched', 'expired'))
) STRICT;
CREATE INDEX commands_queue ON commands(computer, id) WHERE fate = 'queued';

CREATE TABLE workers (
  computer      TEXT PRIMARY KEY,
  token_hash    TEXT,
  version       TEXT,
  slots         INTEGER NOT NULL DEFAULT 0,
  running       INTEGER NOT NULL DEFAULT 0,
  last_seen     INTEGER,
  registered_at INTEGER NOT NULL
) STRICT;

-- What workers on other hosts (and external routines) report about the runs and jobs they hold.
CREATE TABLE remote_runs (
  kind         TEXT NOT NULL CHECK (kind IN ('run', 'job')),
  ref_id       TEXT NOT NULL,
  computer     TEXT NOT NULL,
  state        TEXT NOT NULL CHECK (state IN ('running', 'done', 'refused')),
  pid          INTEGER,
  exit_code    INTEGER,
  signal       TEXT,
  reason       TEXT,
  run_dir      TEXT,
  started_at   INTEGER,
  ended_at     INTEGER,
  heartbeat_at INTEGER,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (kind, ref_id)
) STRICT;

INSERT INTO meta (key, value) VALUES ('defs_version', '0');
`,
  },
  {
    version: 2,
    description: 'webhooks: configured receivers, the delivery queue and log, per-routine trouble state, the event cursor',
    sql: `
-- A receiver: every routine (routine_id NULL) or one; events is a comma list of error, delayed, restart, recover.
CREATE TABLE webhooks (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  url        TEXT NOT NULL,
  routine_id TEXT,
  events     TEXT NOT NULL,
  secret     TEXT,
  created_at INTEGER NOT NULL
) STRICT;

-- The queue (state 'queued') and the delivery log (the rest). No foreign key: the log outlives a removed webhook.
CREATE TABLE webhook_deliveries (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  webhook_id  INTEGER NOT NULL,
  url         TEXT NOT NULL,
  event       TEXT NOT NULL,
  routine_id  TEXT,
  run_id      TEXT,
  payload     TEXT NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('queued', 'delivered', 'failed', 'dropped')),
  attempts    INTEGER NOT NULL DEFAULT 0,
  next_at     INTEGER,
  status_code INTEGER,
  error       TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries(next_at, id) WHERE state = 'queued';

-- Routines that were notified as in trouble (error, delayed, restart) and have not recovered yet.
CREATE TABLE webhook_trouble (
  routine_id TEXT PRIMARY KEY,
  event      TEXT NOT NULL,
  run_id     TEXT,
  since      INTEGER NOT NULL
) STRICT;

-- Events are turned into deliveries from here on: history before the upgrade is never replayed.
INSERT INTO meta (key, value) SELECT 'webhooks_cursor', CAST(COALESCE(MAX(id), 0) AS TEXT) FROM events;
`,
  },
  {
    version: 3,
    description: 'batch jobs may choose the Slurm backend at post: its sbatch options',
    sql: `
-- JSON of SlurmOptions (partition, time, cpus, memory, extra flags) for jobs posted with backend 'slurm'.
ALTER TABLE jobs ADD COLUMN slurm TEXT;
`,
  },
  {
    version: 4,
    description: 'history retention: finished runs and jobs older than the kept days are removed; what metrics counted of them stays in tallies',
    sql: `
-- Finished runs removed by the retention, counted per routine and outcome (metrics counters never go down).
CREATE TABLE run_tallies (
  routine_id        TEXT NOT NULL,
  kind              TEXT NOT NULL,
  status            TEXT NOT NULL,
  n                 INTEGER NOT NULL,
  last_ended_at     INTEGER,
  PRIMARY KEY (routine_id, kind, status)
) STRICT;
-- Durations of removed batch runs that started and ended: per-bucket counts (JSON array, one per bound and +Inf), sum, count.
CREATE TABLE duration_tallies (
  routine_id TEXT PRIMARY KEY,
  buckets    TEXT NOT NULL,
  sum        REAL NOT NULL,
  n          INTEGER NOT NULL
) STRICT;
CREATE INDEX runs_created ON runs(created_at);
CREATE INDEX jobs_created ON jobs(created_at);
CREATE INDEX commands_created ON commands(created_at);
CREATE INDEX remote_runs_updated ON remote_runs(updated_at);
`,
  },
  {
    version: 5,
    description: "indexes for every access path of the pass, the CLI, the API and the UI: nothing reads a routine's whole history",
    sql: `
-- Newest runs of a routine by creation (latest, history, realtime restarts): no sort of its history.
CREATE INDEX runs_routine_created ON runs(routine_id, created_at);
-- A routine's unfinished runs (overlap, stop, restart, external reports): bounded by what is in flight.
CREATE INDEX runs_routine_active ON runs(routine_id, created_at) WHERE status IN ('PENDING', 'DELAYED', 'STARTING', 'RUNNING');
-- The latest run of a routine in a cycle (dependencies, today's status): a seek, not a sort of the day's runs.
DROP INDEX runs_cycle;
CREATE INDEX runs_routine_cycle ON runs(routine_id, cycle, scheduled_at, created_at);
-- Counts of the day by status read the index alone; the retention reads the same index by age.
DROP INDEX runs_created;
CREATE INDEX runs_created_status ON runs(created_at, status);
-- Runs that ended since a time (the day's view: long runs begun the day before; realtime exits).
CREATE INDEX runs_ended ON runs(ended_at) WHERE ended_at IS NOT NULL;
-- Recent failures, newest first.
CREATE INDEX runs_failed ON runs(COALESCE(ended_at, created_at)) WHERE status = 'ERROR';
-- Recent failed batch jobs, newest first.
CREATE INDEX jobs_failed ON jobs(COALESCE(ended_at, updated_at)) WHERE status = 'ERROR';
-- Cancels sent to a computer, newest first.
CREATE INDEX commands_cancels ON commands(computer, created_at) WHERE kind = 'cancel';

-- What the metrics count (finished runs by routine and outcome, durations, last success) is kept
-- as totals, counted as each run finishes (store/runs.ts; a trigger cost 3x per run write here):
-- a scrape reads a row per routine, not the history. The retention removes runs without touching them. Seeded once from the runs kept and
-- from the tallies of runs removed so far (migration 4), which they replace.
CREATE TABLE run_totals (
  routine_id    TEXT NOT NULL,
  kind          TEXT NOT NULL,
  status        TEXT NOT NULL,
  n             INTEGER NOT NULL,
  last_ended_at INTEGER,
  PRIMARY KEY (routine_id, kind, status)
) STRICT;
CREATE TABLE run_duration_totals (
  routine_id TEXT PRIMARY KEY,
  ${V5_BUCKETS.map((b) => `${b} INTEGER NOT NULL DEFAULT 0`).join(',\n  ')},
  sum        REAL NOT NULL,
  n          INTEGER NOT NULL
) STRICT;
INSERT INTO run_totals (routine_id, kind, status, n, last_ended_at)
  SELECT routine_id, kind, status, SUM(n), MAX(last) FROM (
    SELECT routine_id, kind, status, COUNT(*) AS n, MAX(CASE WHEN status = 'COMPLETED' THEN ended_at END) AS last
      FROM runs WHERE status IN ${V5_TERMINAL} GROUP BY routine_id, kind, status
    UNION ALL SELECT routine_id, kind, status, n, last_ended_at FROM run_tallies)
  GROUP BY routine_id, kind, status;
INSERT INTO run_duration_totals (routine_id, ${V5_BUCKETS.join(', ')}, sum, n)
  SELECT routine_id, ${V5_BUCKETS.map((b) => `SUM(${b})`).join(', ')}, SUM(sum), SUM(n) FROM (
    SELECT routine_id, ${V5_BUCKETS.map((_, i) => `SUM(bk = ${i}) AS b${i}`).join(', ')}, SUM(d) AS sum, COUNT(*) AS n FROM (
      SELECT routine_id, d, ${v5Bucket('d')} AS bk FROM (
        SELECT routine_id, MAX(0, ended_at - started_at) / 1000.0 AS d FROM runs WHERE kind = 'batch' AND started_at IS NOT NULL AND ended_at IS NOT NULL))
      GROUP BY routine_id
    UNION ALL SELECT routine_id, ${V5_BUCKETS.map((_, i) => `COALESCE(json_extract(buckets, '$[${i}]'), 0)`).join(', ')}, sum, n FROM duration_tallies)
  GROUP BY routine_id;
DROP TABLE run_tallies;
DROP TABLE duration_tallies;
`,
  },
  {
    version: 6,
    description: 'runs that lasted over ten minutes, by end: what a day carries over from the day before without reading the day',
    sql: `
-- A run created before a time and ended after it was created in the ten minutes before it or lasted
-- longer (store/runs.ts, CARRIED_WINDOW_MS): the few long ones are found here by their end, instead
-- of every run that ended since the time (a whole day's runs at midnight's every-minute routines).
CREATE INDEX runs_long ON runs(ended_at) WHERE ended_at - created_at > 600000;
`,
  },
  {
    version: 7,
    description: "finished runs counted by the quarter-hour they were created in and outcome: today's counts without reading today's runs",
    sql: `
-- Counted as each run finishes (store/totals.ts), beside run_totals. Every zone's midnight falls on
-- a quarter-hour, so today's finished runs by outcome are a day's quarters (a hundred rows) instead
-- of the day's runs (a third of a million at midnight's end with a thousand routines). Seeded from
-- the runs created in the last two days (an index range); meta's run_quarters_from says from which
-- quarter the table holds every finished run (all, in a database without runs yet; store/runs.ts
-- counts earlier days from the runs).
CREATE TABLE run_quarter_totals (
  quarter INTEGER NOT NULL,
  status  TEXT NOT NULL,
  n       INTEGER NOT NULL,
  PRIMARY KEY (quarter, status)
) STRICT, WITHOUT ROWID;
INSERT INTO meta (key, value) SELECT 'run_quarters_from',
  CASE WHEN EXISTS (SELECT 1 FROM runs) THEN CAST((CAST(strftime('%s', 'now') AS INTEGER) - 2 * 86400) / 900 AS TEXT) ELSE '0' END;
INSERT INTO run_quarter_totals (quarter, status, n)
  SELECT created_at / 900000, status, COUNT(*) FROM runs INDEXED BY runs_created_status
  WHERE created_at >= (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'run_quarters_from') * 900000 AND status IN ${V5_TERMINAL}
  GROUP BY created_at / 900000, status;
`,
  },
  {
    version: 8,
    description: "one index of unfinished runs instead of two: every run's move from one active status to another rewrote both",
    sql: `
-- runs_routine_active (migration 5) holds the same rows (its WHERE is runs_active's) keyed by routine and
-- creation: the reads of all unfinished runs scan it instead (bounded by what is in flight). Each
-- status change of an unfinished run rewrote an entry in both; now in one (a tenth of a run's writes).
DROP INDEX runs_active;
`,
  },
  {
    version: 9,
    description: "the newest run of each routine kept as runs are written: the routine list and the metrics read a row per routine, not a seek into each one's history",
    sql: `
-- Each routine's newest run by run time (ORDER BY scheduled_at DESC, rowid DESC: the routine list's
-- last run and today's status, the doctor) and by creation (created_at DESC, rowid DESC: the
-- metrics' routine states), written as each run is inserted (store/latest.ts). Seeking them in
-- runs_routine and runs_routine_created is a path per routine through indexes that deepen with
-- history: at 13 M runs a list of 1,100 routines touched 5,100 pages (3,800 with a day of runs), and
-- the page cache had to hold them to stay quick. The retention never removes a routine's newest run.
-- Seeded from the runs kept: two seeks per defined routine (a routine without a row is sought).
CREATE TABLE routine_latest (
  routine_id    TEXT PRIMARY KEY,
  scheduled_at  INTEGER NOT NULL,
  run_rowid     INTEGER NOT NULL,
  created_at    INTEGER NOT NULL,
  created_rowid INTEGER NOT NULL
) STRICT;
INSERT INTO routine_latest (routine_id, scheduled_at, run_rowid, created_at, created_rowid)
  SELECT d.id, s.scheduled_at, s.rowid, c.created_at, c.rowid FROM routines d
    JOIN runs s ON s.rowid = (SELECT x.rowid FROM runs x WHERE x.routine_id = d.id ORDER BY x.scheduled_at DESC, x.rowid DESC LIMIT 1)
    JOIN runs c ON c.rowid = (SELECT x.rowid FROM runs x INDEXED BY runs_routine_created WHERE x.routine_id = d.id ORDER BY x.created_at DESC, x.rowid DESC LIMIT 1);
`,
  },
  {
    version: 10,
    description: 'the number of jobs in each status kept as jobs are written: status and metrics read seven rows, not every kept job',
    sql: `
-- Counting jobs by status walked jobs_status over every job the retention keeps (30 days of them),
-- at each status recount and each /metrics scrape. Kept by triggers, so every write of a job
-- (insert, move, the retention's delete) keeps it true without each caller remembering to.
-- A row per status the table's CHECK allows, so the triggers only ever update.
CREATE TABLE job_totals (
  status TEXT PRIMARY KEY,
  n      INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO job_totals (status, n)
  SELECT s.status, (SELECT COUNT(*) FROM jobs j WHERE j.status = s.status)
  FROM (SELECT 'WAITING' AS status UNION ALL SELECT 'PENDING' UNION ALL SELECT 'FETCHED' UNION ALL SELECT 'RUNNING'
        UNION ALL SELECT 'COMPLETED' UNION ALL SELECT 'ERROR' UNION ALL SELECT 'CANCEL') s;
CREATE TRIGGER job_totals_insert AFTER INSERT ON jobs BEGIN
  UPDATE job_totals SET n = n + 1 WHERE status = NEW.status;
END;
CREATE TRIGGER job_totals_move AFTER UPDATE OF status ON jobs WHEN NEW.status IS NOT OLD.status BEGIN
  UPDATE job_totals SET n = n - 1 WHERE status = OLD.status;
  UPDATE job_totals SET n = n + 1 WHERE status = NEW.status;
END;
CREATE TRIGGER job_totals_delete AFTER DELETE ON jobs BEGIN
  UPDATE job_totals SET n = n - 1 WHERE status = OLD.status;
END;
`,
  },
  {
    version: 11,
    description: "fewer indexes written per run: a routine's newest run by run time is kept (routine_latest), not indexed; creation order without the status; no per-routine index of events",
    sql: `
-- Each index keyed by routine takes an insert on a leaf of its own per routine (its newest entries),
-- deep in a B-tree that deepens with history: with a month of history a pass of 100 runs dirtied
-- 400 pages of such indexes (a page and a split each), against 50 in an empty data dir, and the
-- checkpoints wrote them back across the file. Three of them go:
-- runs_routine (routine, run time) answered only "the newest by run time", which routine_latest
-- (migration 9) keeps: it now holds a row for every routine with runs, not only the defined ones
-- (sought here through runs_routine, one seek per routine, before it goes), so nothing seeks it.
-- (IF EXISTS and no INDEXED BY: a test's database set back to an earlier version runs this again.)
WITH RECURSIVE ids(id) AS (
  SELECT (SELECT MIN(routine_id) FROM runs)
  UNION ALL SELECT (SELECT MIN(routine_id) FROM runs WHERE routine_id > ids.id) FROM ids WHERE ids.id IS NOT NULL)
INSERT INTO routine_latest (routine_id, scheduled_at, run_rowid, created_at, created_rowid)
  SELECT ids.id, s.scheduled_at, s.rowid, c.created_at, c.rowid FROM ids
    JOIN runs s ON s.rowid = (SELECT x.rowid FROM runs x WHERE x.routine_id = ids.id ORDER BY x.scheduled_at DESC, x.rowid DESC LIMIT 1)
    JOIN runs c ON c.rowid = (SELECT x.rowid FROM runs x INDEXED BY runs_routine_created WHERE x.routine_id = ids.id ORDER BY x.created_at DESC, x.rowid DESC LIMIT 1)
  WHERE ids.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM routine_latest l WHERE l.routine_id = ids.id);
DROP INDEX IF EXISTS runs_routine;
-- events_routine (routine, id) held every event of a routine (two per run) for one reader: the lines
-- an external run sent (tend logs), which are found by their run instead.
DROP INDEX IF EXISTS events_routine;
CREATE INDEX IF NOT EXISTS events_external_log ON events(run_id, id) WHERE type = 'external:log';
-- runs_created_status (migration 5) rewrote its entry at each of a run's status changes, for one
-- count that read the index alone: the count of a day before the quarter totals (migration 7),
-- which reads the rows instead. The day's pages and the retention read the same creation order.
CREATE INDEX IF NOT EXISTS runs_created ON runs(created_at);
DROP INDEX IF EXISTS runs_created_status;
`,
  },
  {
    version: 12,
    description: "each routine's newest run in each cycle kept as runs are inserted, keyed by cycle: no index of runs by routine and cycle to write",
    sql: `
-- runs_routine_cycle (migration 5) answered one question, a routine's newest run in a cycle (a
-- dependency's run of the day, what waits), and every insert wrote it on a leaf of its own per
-- routine, deep in a B-tree that deepens with history (165 of the 380 pages a pass of 100 runs
-- dirtied with a month of history). The answer is kept instead (store/cycles.ts), keyed by cycle
-- first: the pass writes today's rows, one per routine, a few pages together whatever the history.
-- The retention removes a row once the run it names is gone (a cycle older than the kept days).
-- Seeded through the index, a seek per routine and cycle, before it goes.
CREATE TABLE routine_cycles (
  cycle        TEXT NOT NULL,
  routine_id   TEXT NOT NULL,
  scheduled_at INTEGER NOT NULL,
  created_at   INTEGER NOT NULL,
  run_rowid    INTEGER NOT NULL,
  PRIMARY KEY (cycle, routine_id)
) STRICT, WITHOUT ROWID;
INSERT INTO routine_cycles (cycle, routine_id, scheduled_at, created_at, run_rowid)
  SELECT g.cycle, g.routine_id, r.scheduled_at, r.created_at, r.rowid FROM (SELECT DISTINCT routine_id, cycle FROM runs INDEXED BY runs_routine_cycle) g
    JOIN runs r ON r.rowid = (SELECT x.rowid FROM runs x INDEXED BY runs_routine_cycle WHERE x.routine_id = g.routine_id AND x.cycle = g.cycle
      ORDER BY x.scheduled_at DESC, x.created_at DESC, x.rowid DESC LIMIT 1);
DROP INDEX runs_routine_cycle;
`,
  },
  {
    version: 13,
    description: 'the index of ended runs narrowed to the realtime exits its one reader counts',
    sql: `
-- runs_ended (migration 5) took an entry as every run finished, for one count: the realtime
-- instances that exited in a window (the MCP's failures). The day's view reads runs_long since
-- migration 6. It now holds the exits alone: a write fewer per finished batch run, and 214 MB of
-- the bench's month (9.2 GB) less. (IF: a test's database set back to an earlier version runs this again.)
CREATE INDEX IF NOT EXISTS runs_exited ON runs(ended_at) WHERE kind = 'realtime' AND status = 'EXITED';
DROP INDEX IF EXISTS runs_ended;
`,
  },
  {
    version: 14,
    description: "each routine's runs chained newest first through the runs themselves: no index of runs by routine to write",
    sql: `
-- runs_routine_created (migration 5) was the last index keyed by routine: every insert wrote it on a
-- leaf of its own per routine, deep in a B-tree that deepens with history (a pass of 100 runs wrote
-- 214 WAL pages with a month of history, 82 without; 85 and 80 without the index). What it answered, a routine's newest runs
-- by creation (the routine page, tend logs, realtime restarts), is a chain instead (store/chain.ts):
-- each run holds the rowid of its routine's run created before it (created_at, then rowid), and
-- routine_latest names the newest. run_links holds the links no row holds: those of the runs kept
-- here (seeded through the index, in rowid order, before it goes: 57 s for 13 M runs), and those
-- the retention leaves in place of a removed run while a run before it is kept.
ALTER TABLE runs ADD COLUMN prev_rowid INTEGER;
CREATE TABLE run_links (
  run_rowid  INTEGER PRIMARY KEY,
  prev_rowid INTEGER NOT NULL
) STRICT;
INSERT INTO run_links (run_rowid, prev_rowid)
  SELECT rid, prev FROM (SELECT rowid AS rid, LAG(rowid) OVER (PARTITION BY routine_id ORDER BY created_at, rowid) AS prev FROM runs INDEXED BY runs_routine_created)
  WHERE prev IS NOT NULL ORDER BY rid;
DROP INDEX runs_routine_created;
`,
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
