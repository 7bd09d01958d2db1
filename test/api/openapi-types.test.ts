// The documented result schemas (main/engine/api/responses.ts) against what each method returns:
// checked by the compiler (npm run typecheck), so a changed return type cannot leave the OpenAPI
// document describing the old one. Real answers are checked in openapi.test.ts.
import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { RESULTS } from '../../main/engine/api/responses.js';
import { ROUTES, type Channel } from '../../contract/routes.js';
import type { Ret } from '../../contract/calls.js';

/** Channels whose every possible result is not a value their schema describes (should be none). */
type Undescribed = { [C in Channel]: [Ret<C>] extends [z.input<(typeof RESULTS)[C]>] ? never : C }[Channel];
const assert = <T extends true>(value: T): T => value;
assert<[Undescribed] extends [never] ? true : false>(true);

describe('result schemas', () => {
  it('exist for every channel of the contract, and no other', () => {
    expect(Object.keys(RESULTS).sort()).toEqual(Object.keys(ROUTES).sort());
  });
});
