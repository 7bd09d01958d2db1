// Few error classes, only those that change control flow. Every boundary (CLI, HTTP, IPC, files)
// maps TendError.code to its own way of saying it: exit 2, a 4xx, a {ok:false} value.

export interface Issue {
  /** Dotted path of the offending field, e.g. `routines.3.cron`; empty for the whole input. */
  path: string;
  message: string;
}

export type ErrorCode = 'INVALID' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'REFUSED' | 'UNAVAILABLE';

export class TendError extends Error {
  readonly code: ErrorCode;
  readonly issues: Issue[];
  constructor(code: ErrorCode, message: string, issues: Issue[] = []) {
    super(message);
    this.name = 'TendError';
    this.code = code;
    this.issues = issues;
  }
}

export function invalid(issues: Issue[] | Issue, message?: string): TendError {
  const list = Array.isArray(issues) ? issues : [issues];
  return new TendError('INVALID', message ?? list.map(formatIssue).join('; '), list);
}

export function notFound(what: string): TendError {
  return new TendError('NOT_FOUND', `${what} not found`);
}

export function formatIssue(issue: Issue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: { code: ErrorCode | 'INTERNAL'; message: string; issues?: Issue[] } };

export function toResultError(err: unknown): Extract<Result<never>, { ok: false }>['error'] {
  if (err instanceof TendError) return { code: err.code, message: err.message, issues: err.issues };
  return { code: 'INTERNAL', message: errorMessage(err) };
}
