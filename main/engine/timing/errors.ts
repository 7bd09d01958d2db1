// The one error class of the timing module: bad input (a duration, a cron expression, runtimes,
// an `at` instant, a time zone). The message says what is wrong; callers prefix the field name.

export class TimingError extends Error {
  override name = 'TimingError';
}
