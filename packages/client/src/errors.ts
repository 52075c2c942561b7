/** Base class of the errors this client throws. Messages name the method and URL, never the API key. */
export class AnimalStoreError extends Error {
  override name = 'AnimalStoreError';
}

/** The request could not be completed (connection refused, reset, DNS failure...), after every allowed retry. */
export class AnimalStoreNetworkError extends AnimalStoreError {
  override name = 'AnimalStoreNetworkError';
  constructor(
    readonly method: string,
    readonly url: string,
    /** How many times the request was sent (or tried). */
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(
      `${method} ${url} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${describeCause(options.cause)}`,
      options,
    );
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

function errorCode(body: unknown): string | undefined {
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
