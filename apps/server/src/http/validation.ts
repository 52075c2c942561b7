import type { RequestValidationError } from '@ts-rest/express';
import type { ZodError } from 'zod';
import { AppError } from '../errors/app-error.js';

function describe(kind: string, error: ZodError): string {
  const parts = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join('.') : kind;
    // Our schemas name the field in their messages; zod's built-in ones do not.
    return issue.message.startsWith(String(issue.path[0] ?? '\0')) ? issue.message : `${where}: ${issue.message}`;
  });
  return parts.join('; ');
}

/** ts-rest's request validation failures -> 400 `invalid_request` whose message names the parameter or field. */
export function validationError(err: RequestValidationError): AppError {
  if (err.pathParams)
    return new AppError('invalid_request', `Invalid path parameter: ${describe('path', err.pathParams)}`);
  if (err.query) return new AppError('invalid_request', `Invalid query parameter: ${describe('query', err.query)}`);
  if (err.body) return new AppError('invalid_request', `Invalid request body: ${describe('body', err.body)}`);
  if (err.headers) return new AppError('invalid_request', `Invalid request header: ${describe('header', err.headers)}`);
  return new AppError('invalid_request', 'Invalid request headers');
}
