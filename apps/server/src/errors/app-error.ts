import { ERROR_STATUS, type ErrorCode } from '@animal-store/contract';

/**
 * A refusal the service decides itself, with a place in the contract's closed set of codes: its status follows from
 * the code, its message is safe to show to the client, and `headers` go on its answer. The HTTP layer, the key
 * operations and the key CLI all throw this one class; the error handler answers it as it is.
 */
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}
