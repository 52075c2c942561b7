/** A database wait of our own (a read waiting for a slot) that ran out of time: the database is busy, retry later. */
export class DatabaseBusyError extends Error {
  readonly code = 'DATABASE_BUSY';
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseBusyError';
  }
}
