import { z } from 'zod';
import { openApi } from './schemas.js';

/** The closed set of `code` values an Error body carries, with the HTTP status each goes with. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_key_in_use: 409,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  request_header_fields_too_large: 431,
  rate_limit_exceeded: 429,
  api_key_banned: 429,
  concurrency_limit_exceeded: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];
export const ErrorCode = z.enum(ERROR_CODES);

export const ErrorBody = openApi(
  z.object({
    code: ErrorCode,
    message: z.string(),
    status: z.number().int(),
  }),
  { title: 'Error' },
);
/** The spec's `Error` schema. Exported as `ErrorBody` too, so that it does not shadow the global `Error` by accident. */
export type ErrorBody = z.infer<typeof ErrorBody>;
export { ErrorBody as Error };

/** Builds an Error body; the status always follows from the code. */
export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { code, message, status: ERROR_STATUS[code] };
}
