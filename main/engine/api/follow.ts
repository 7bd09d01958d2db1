// A run's output as server-sent events, as it is written (the UI's live log view).
import { setTimeout as delay } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { followLog } from '../../../worker/local/logs.js';
import type { Engine } from '../engine.js';
import { notFound, TendError } from '../errors.js';
import type { Streams } from './streams.js';

const WAITING = new Set(['PENDING', 'DELAYED', 'STARTING']);
const DIR_POLL_MS = 200;

export async function followRoute(engine: Engine, streams: Streams, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { id } = req.params as { id: string };
  const q = req.query as { stream?: string; tailBytes?: string };
  const stream = q.stream ?? 'stdout';
  if (stream !== 'stdout' && stream !== 'stderr') throw new TendError('INVALID', 'stream must be stdout or stderr', [{ path: 'stream', message: 'stdout or stderr' }]);
  const tailBytes = q.tailBytes === undefined ? 64 * 1024 : Number(q.tailBytes);
  if (!Number.isSafeInteger(tailBytes) || tailBytes < 0 || tailBytes > 4 * 1024 * 1024) throw new TendError('INVALID', 'tailBytes out of range', [{ path: 'tailBytes', message: 'an integer from 0 to 4194304' }]);
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
  let runDir = run.runDir;
  while (!runDir && !stop.signal.aborted) {
    const now = engine.store.runs.get(id);
    runDir = now?.runDir ?? null;
    if (runDir || !now || !WAITING.has(now.status)) break;
    await delay(DIR_POLL_MS, undefined, { signal: stop.signal }).catch(() => undefined);
  }
  if (!runDir) {
    if (!stop.signal.aborted) res.write(`event: end\ndata: {"reason":"not started"}\n\n`);
    unregister();
    res.end();
    return;
  }
  try {
    for await (const chunk of followLog(runDir, stream, { signal: stop.signal, tailBytes })) {
      res.write(`event: chunk\ndata: ${JSON.stringify(chunk)}\n\n`);
    }
    if (!stop.signal.aborted) res.write(`event: end\ndata: {"reason":"finished"}\n\n`);
  } catch (err) {
    if (!stop.signal.aborted) res.write(`event: end\ndata: ${JSON.stringify({ reason: (err as Error).message })}\n\n`);
  }
  unregister();
  res.end();
}
