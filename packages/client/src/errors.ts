/** Base class of the errors this client throws. Messages name the method and URL, never the API key. */
export class AnimalStoreError extends Error {
  override name = 'AnimalStoreError';
}

/** The request could not be completed (connection refused, reset, DNS failure...), after every allowed retry. */
export class AnimalStoreNetworkError extends AnimalStoreError {
  override name = 'AnimalStoreNetworkError';
  /** True when a retry was allowed but the retry budget was spent, so none was sent. */
  readonly budgetSpent: boolean;
  constructor(
    readonly method: string,
    readonly url: string,
    /** How many times the request was sent (or tried). */
    readonly attempts: number,
    options: { cause: unknown; budgetSpent?: boolean },
  ) {
    super(
      `${method} ${url} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}` +
        `${options.budgetSpent ? ' (not retried: the retry budget is spent)' : ''}: ${describeCause(options.cause)}`,
      { cause: options.cause },
    );
    this.budgetSpent = options.budgetSpent ?? false;
  }
}

/** An answer other than the expected success, where the call cannot hand back a typed result (pagination). */
export class AnimalStoreResponseError extends AnimalStoreError {
  override name = 'AnimalStoreResponseError';
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    /** The response body: an Error body (`{ code, message, status }`) when the service produced it. */
    readonly body: unknown,
  ) {
    const code = errorCode(body);
    super(`${method} ${url} answered ${status}${code ? ` (${code})` : ''}`);
  }

  /** The Error body's `code`, when there is one. */
  get code(): string | undefined {
    return errorCode(this.body);
  }
}

/**
 * The service retired the operation (410 `gone`: its announced Sunset has passed). Thrown by the call instead of a
 * result: the operation will not come back; `successor` says what to use.
 */
export class AnimalStoreGoneError extends AnimalStoreResponseError {
  override name = 'AnimalStoreGoneError';
  constructor(
    method: string,
    url: string,
    body: unknown,
    /** The contract's operation name, e.g. `getPet`. */
    readonly operation: string,
    /** What to use instead. */
    readonly successor: string,
  ) {
    super(method, url, 410, body);
    this.message = `@animal-store/client: ${operation} (${method} ${url}) was retired by the service (410 gone); use ${successor} instead.`;
  }
}

/** The Error body's `code`, when there is one. */
export function errorCode(body: unknown): string | undefined {
  if (body && typeof body === 'object' && 'code' in body && typeof body.code === 'string') return body.code;
  return undefined;
}

/** The most specific `code` (ECONNREFUSED, UND_ERR_SOCKET...) along an error's `cause` chain, if any. */
export function networkErrorCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let found: string | undefined;
  const visit = (e: unknown) => {
    if (!e || typeof e !== 'object' || seen.has(e)) return;
    seen.add(e);
    if ('code' in e && typeof e.code === 'string') found = e.code;
    if ('cause' in e) visit(e.cause);
    if ('errors' in e && Array.isArray(e.errors)) e.errors.forEach(visit);
  };
  visit(error);
  return found;
}

function describeCause(cause: unknown): string {
  const code = networkErrorCode(cause);
  const message = cause instanceof Error ? cause.message : String(cause);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}
