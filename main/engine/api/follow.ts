// A run's output as server-sent events, as it is written (the UI's live log view).
import { setTimeout as delay } from 'node:timers/promises';
import { decimalInt } from '../domain/schema.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { zodIssues } from '../domain/schema.js';
import type { Engine } from '../engine.js';
import { invalid, notFound } from '../errors.js';
import { secretsOf } from '../mask.js';
import { maskFollowed } from '../mask-stream.js';
import type { Streams } from './streams.js';

const WAITING = new Set(['PENDING', 'DELAYED', 'STARTING']);

/** The query of a follow (also what the OpenAPI document says it takes). */
export const FollowQuery = z.object({
  stream: z.enum(['stdout', 'stderr']).optional(),
  tailBytes: decimalInt(0, 4 * 1024 * 1024).optional().describe('bytes of earlier output sent first (default 65536)'),
});
const DIR_POLL_MS = 200;

export async function followRoute(engine: Engine, streams: Streams, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { id } = req.params as { id: string };
  const q = FollowQuery.safeParse(req.query ?? {});
  if (!q.success) throw invalid(zodIssues(q.error));
  const stream = q.data.stream ?? 'stdout';
  const tailBytes = q.data.tailBytes ?? 64 * 1024;
  const run = engine.store.runs.get(id);
  if (!run) throw notFound(`run ${id}`);
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.write(': following\n\n');
  const stop = new AbortController();
  req.raw.on('close', () => stop.abort());
  res.on('close', () => stop.abort());
  const unregister = streams.add(() => stop.abort());
  // A run still waiting to start has no directory yet: wait for it (a page that opened the log of
  // a run just requested must see its first lines), unless the run ends first.
  let started = run;
  while (!started.runDir && !stop.signal.aborted) {
    const now = engine.store.runs.get(id);
    if (now) started = now;
    if (started.runDir || !now || !WAITING.has(now.status)) break;
    await delay(DIR_POLL_MS, undefined, { signal: stop.signal }).catch(() => undefined);
  }
  if (!started.runDir) {
    if (!stop.signal.aborted) res.write(`event: end\ndata: {"reason":"not started"}\n\n`);
    unregister();
    res.end();
    return;
  }
  try {
    const secrets = secretsOf(engine.store.routines.get(run.routineId));
    for await (const chunk of maskFollowed(engine.runFiles.follow(started, stream, { signal: stop.signal, tailBytes }), secrets)) {
      res.write(`event: chunk\ndata: ${JSON.stringify(chunk)}\n\n`);
    }
    if (!stop.signal.aborted) res.write(`event: end\ndata: {"reason":"finished"}\n\n`);
  } catch (err) {
    if (!stop.signal.aborted) res.write(`event: end\ndata: ${JSON.stringify({ reason: (err as Error).message })}\n\n`);
  }
  unregister();
  res.end();
}
