// How a failed call to the API reads on the client side: the server's own code, message and
// issues (the `{ok: false, error}` body of main/engine/api/responses.ts), never a code guessed
// from the HTTP status. A client adds two codes of its own, for when no Tend answer came:
// NETWORK (no answer at all) and INTERNAL (an answer that is not the API's).
import type { Issue, ResultError } from './calls.js';

export type ApiErrorCode = ResultError['code'];

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly issues: Issue[] = [],
    /** The HTTP status it came with; null when nothing answered. */
    readonly status: number | null = null,
  ) {
    super(message);
  }

  /** The same failure as a value, the way it crosses IPC and HTTP. */
  toResultError(): ResultError {
    return this.issues.length ? { code: this.code, message: this.message, issues: this.issues } : { code: this.code, message: this.message };
  }
}

/** The `error` of an `{ok: false, error}` body, or null when the body is not one. */
export function errorOfBody(body: unknown): ResultError | null {
  if (typeof body !== 'object' || body === null || (body as { ok?: unknown }).ok !== false) return null;
  const e = (body as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return null;
  const { code, message, issues } = e as { code?: unknown; message?: unknown; issues?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string') return null;
  const list = Array.isArray(issues) ? issues.filter((i): i is Issue => typeof i?.path === 'string' && typeof i?.message === 'string') : [];
  return list.length ? { code: code as ApiErrorCode, message, issues: list } : { code: code as ApiErrorCode, message };
}
