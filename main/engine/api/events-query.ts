// The query of the event stream (GET /api/events), parsed by the route and described by the
// OpenAPI document. `Last-Event-ID` stands for `after` when the query has none. Loaded with the
// first event stream (api/server.ts), as zod is.
import { z } from 'zod';
import { zodIssues } from '../domain/schema.js';
import { invalid } from '../errors.js';

export const EventsQuery = z.object({ after: z.string().regex(/^\d{1,15}$/, 'an event id (a non-negative integer)').optional().describe('replay the events after this id') });

/** The query, or INVALID naming the field. */
export function parseEventsQuery(input: unknown): z.output<typeof EventsQuery> {
  const q = EventsQuery.safeParse(input);
  if (!q.success) throw invalid(zodIssues(q.error));
  return q.data;
}
