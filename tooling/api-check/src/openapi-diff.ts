/**
 * The changes between two OpenAPI 3 documents of one API, each classed as breaking or additive by the list in
 * docs/api-versioning.md: removed operations, parameters, statuses, media types, response fields and headers, new
 * required inputs, and every narrowing of what a request may carry or widening of what a response may contain are
 * breaking; new operations, optional inputs, response fields and statuses, and new enum values in responses (clients
 * must tolerate unknown values, e.g. a new error code) are additive.
 */
import { type Narrowing, type Resolve, type Schema, lost, resolver } from './schema-diff.js';

export interface Change {
  breaking: boolean;
  /** `operation-removed`, `parameter-narrowed`, `response-property-removed`... */
  rule: string;
  /** `GET /v1/pets` and, where it applies, the part (`query limit`, `201 application/json`). */
  where: string;
  detail: string;
}

type Operation = {
  parameters?: unknown[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }>;
};
type Parameter = { name: string; in: string; required?: boolean; schema?: unknown };

const OLD_NEW = { a: 'old', b: 'new' };
const NEW_OLD = { a: 'new', b: 'old' };
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

export function compareDocuments(base: Schema, current: Schema): Change[] {
  const side = { base: resolver(base), current: resolver(current) };
  const changes: Change[] = [];
  const basePaths = pathsOf(base);
  const currentPaths = pathsOf(current);
  for (const [key, { path, item }] of basePaths) {
    const now = currentPaths.get(key);
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const next = now?.item[method] as Operation | undefined;
      if (!next) {
        changes.push({ breaking: true, rule: now ? 'operation-removed' : 'path-removed', where, detail: 'gone' });
        continue;
      }
      const report = (breaking: boolean, rule: string, part: string, detail: string) =>
        changes.push({ breaking, rule, where: part ? `${where} ${part}` : where, detail });
      compareParameters(operation, next, side, report);
      compareRequestBody(operation, next, side, report);
      compareResponses(operation, next, side, report);
    }
  }
  for (const [key, { path, item }] of currentPaths)
    for (const method of METHODS)
      if (item[method] && !(basePaths.get(key)?.item[method] as Operation | undefined))
        changes.push({
          breaking: false,
          rule: 'operation-added',
          where: `${method.toUpperCase()} ${path}`,
          detail: 'new',
        });
  return changes;
}

type Report = (breaking: boolean, rule: string, part: string, detail: string) => void;
type Sides = { base: Resolve; current: Resolve };

/** Paths keyed with their parameters' names blanked (`/v1/pets/{}`): renaming a path parameter moves nothing. */
function pathsOf(document: Schema) {
  const paths = new Map<string, { path: string; item: Record<string, unknown> }>();
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Record<string, unknown>>))
    paths.set(path.replace(/\{[^}]*\}/g, '{}'), { path, item });
  return paths;
}

function parametersOf(operation: Operation, resolve: Resolve): Map<string, Parameter> {
  const found = new Map<string, Parameter>();
  let position = 0;
  for (const raw of operation.parameters ?? []) {
    const parameter = resolve(raw) as unknown as Parameter;
    const key = parameter.in === 'path' ? `path #${position++}` : `${parameter.in} ${parameter.name.toLowerCase()}`;
    found.set(key, parameter);
  }
  return found;
}

function compareParameters(operation: Operation, next: Operation, side: Sides, report: Report) {
  const before = parametersOf(operation, side.base);
  const after = parametersOf(next, side.current);
  for (const [key, parameter] of before) {
    const part = `${parameter.in} ${parameter.name}`;
    const now = after.get(key);
    if (!now) {
      report(true, 'parameter-removed', part, 'gone');
      continue;
    }
    if (now.required && !parameter.required) report(true, 'parameter-required', part, 'now required');
    for (const narrowing of lost(parameter.schema, now.schema, side.base, side.current, OLD_NEW))
      report(true, 'parameter-narrowed', part, describe(narrowing));
  }
  for (const [key, parameter] of after)
    if (!before.has(key))
      report(
        parameter.required === true,
        parameter.required ? 'parameter-added-required' : 'parameter-added',
        `${parameter.in} ${parameter.name}`,
        'new',
      );
}

function compareRequestBody(operation: Operation, next: Operation, side: Sides, report: Report) {
  const before = operation.requestBody;
  const after = next.requestBody;
  if (!before) {
    if (after) report(after.required === true, 'request-body-added', '', after.required ? 'now required' : 'optional');
    return;
  }
  if (!after) return report(true, 'request-body-removed', '', 'gone');
  if (after.required && !before.required) report(true, 'request-body-required', '', 'now required');
  for (const [media, content] of Object.entries(before.content ?? {})) {
    const now = after.content?.[media];
    if (!now) {
      report(true, 'request-media-type-removed', media, 'no longer accepted');
      continue;
    }
    for (const narrowing of lost(content.schema, now.schema, side.base, side.current, OLD_NEW)) {
      const added = narrowing.rule === 'property-undescribed'; // a new optional field
      report(!added, added ? 'request-property-added' : `request-${narrowing.rule}`, media, describe(narrowing));
    }
  }
}

function compareResponses(operation: Operation, next: Operation, side: Sides, report: Report) {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const now = next.responses?.[status];
    if (!now) {
      report(true, 'response-status-removed', status, 'no longer answered');
      continue;
    }
    for (const header of Object.keys(response.headers ?? {}))
      if (!Object.keys(now.headers ?? {}).some((name) => name.toLowerCase() === header.toLowerCase()))
        report(true, 'response-header-removed', `${status} ${header}`, 'no longer sent');
    for (const [media, content] of Object.entries(response.content ?? {})) {
      const current = now.content?.[media];
      if (!current) {
        report(true, 'response-media-type-removed', `${status} ${media}`, 'no longer answered');
        continue;
      }
      for (const widening of lost(current.schema, content.schema, side.current, side.base, NEW_OLD)) {
        const rule = widening.rule === 'property-undescribed' ? 'property-removed' : widening.rule;
        report(rule !== 'enum-value', `response-${rule}`, `${status} ${media}`, describe(widening));
      }
      for (const narrowing of lost(content.schema, current.schema, side.base, side.current, OLD_NEW))
        if (narrowing.rule === 'property-undescribed')
          report(false, 'response-property-added', `${status} ${media}`, describe(narrowing));
    }
  }
  for (const status of Object.keys(next.responses ?? {}))
    if (!operation.responses?.[status]) report(false, 'response-status-added', status, 'new');
}

function describe(narrowing: Narrowing): string {
  return `${narrowing.at}: ${narrowing.detail}`;
}
