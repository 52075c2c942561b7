import { DependencyError } from '../errors/dependency-failure.js';

/** A database wait of our own (a read waiting for a slot) that ran out of time: the database is busy, retry later. */
export class DatabaseBusyError extends DependencyError {
  constructor(message: string) {
    super('database_busy', message);
    this.name = 'DatabaseBusyError';
  }
}
