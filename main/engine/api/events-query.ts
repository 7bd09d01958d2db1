// The query of the event stream (GET /api/events), parsed by the route and described by the
// OpenAPI document. `Last-Event-ID` stands for `after` when the query has none.
import { z } from 'zod';

export const EventsQuery = z.object({ after: z.string().regex(/^\d{1,15}$/, 'an event id (a non-negative integer)').optional().describe('replay the events after this id') });
