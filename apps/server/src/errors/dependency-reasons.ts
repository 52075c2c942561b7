/** Why a dependency failed: the `reason` label of `animal_store_dependency_failures_total` and the client's message. */
export type DependencyFailure =
  | 'database_unreachable'
  | 'database_timeout'
  | 'database_busy'
  | 'disk_full'
  | 'database_read_only'
  | 'database_io_error'
  | 'rate_limit_store';

/** The client's message for each reason: says what is wrong and that retrying is right, names no library. */
export const FAILURE_MESSAGE: Record<DependencyFailure, string> = {
  database_unreachable: 'The database is unreachable; retry later',
  database_timeout: 'The database did not answer in time; retry later',
  database_busy: 'The service is busy; retry later',
  disk_full: 'The database is out of storage space; retry later',
  database_read_only: 'The database is read-only at the moment; retry later',
  database_io_error: 'The database could not read or write its storage; retry later',
  rate_limit_store: 'Rate limiting is temporarily unavailable; retry later',
};

/** Seconds a client should wait before retrying, by reason: short for congestion, longer for outages. */
export const RETRY_AFTER_SECONDS: Record<DependencyFailure, number> = {
  database_unreachable: 5,
  database_timeout: 2,
  database_busy: 1,
  disk_full: 30,
  database_read_only: 30,
  database_io_error: 5,
  rate_limit_store: 1,
};

/** Seconds a client is told to wait when this replica is shutting down (`/readyz`): it is taken out meanwhile. */
export const SHUTTING_DOWN_RETRY_AFTER_SECONDS = 5;
