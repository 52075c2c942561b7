import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from './errors.js';
import { IDEMPOTENCY_HEADERS, RATE_LIMIT_HEADERS } from './headers.js';
import { buildOpenApiDocument } from './openapi.js';
import { contract } from './contract.js';

type Json = Record<string, unknown>;
type Operation = {
  operationId: string;
  deprecated?: boolean;
  security?: Json[];
  responses: Record<string, { headers?: Json; content?: Record<string, { schema?: { $ref?: string } }> }>;
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
};

const built = fileURLToPath(new URL('../dist/openapi.json', import.meta.url));
const documents: [string, () => Json][] = [['buildOpenApiDocument()', () => buildOpenApiDocument()]];
if (existsSync(built)) documents.push(['dist/openapi.json', () => JSON.parse(readFileSync(built, 'utf8')) as Json]);

/** The validator dereferences in place: always hand it a copy. */
async function validateCopy(document: Json) {
  const result = await validate(structuredClone(document) as never);
  return { ...result, report: result.valid ? '' : compileErrors(result) };
}

function operations(document: Json): Map<string, Operation> {
  const found = new Map<string, Operation>();
  for (const pathItem of Object.values(document.paths as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(pathItem)) found.set(operation.operationId, operation);
  }
  return found;
}

describe.each(documents)('%s', (_name, load) => {
  it('is a valid OpenAPI 3 document', async () => {
    const document = load();
    expect(String(document.openapi)).toMatch(/^3\./);
    const result = await validateCopy(document);
    expect(result.report).toBe('');
    expect(result.valid).toBe(true);
    expect(result.specification).toBe('OpenAPI');
  });

  it('has one operation per contract route, each under its /v1 path', () => {
    const document = load();
    const ops = operations(document);
    expect([...ops.keys()].sort()).toEqual(Object.keys(contract).sort());
    for (const [name, route] of Object.entries(contract)) {
      const openApiPath = route.path.replace(/:(\w+)/g, '{$1}');
      const pathItem = (document.paths as Record<string, Record<string, Operation>>)[openApiPath];
      expect(pathItem?.[route.method.toLowerCase()]?.operationId, `${route.method} ${openApiPath}`).toBe(name);
    }
  });

  it('declares bearer authentication and requires it on every operation', () => {
    const document = load();
    const components = document.components as { securitySchemes: Record<string, Json> };
    expect(components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    for (const operation of operations(document).values()) expect(operation.security).toEqual([{ bearerAuth: [] }]);
  });

  it('marks getPet, and only getPet, deprecated', () => {
    const ops = operations(load());
    expect(ops.get('getPet')?.deprecated).toBe(true);
    expect(ops.get('listPets')?.deprecated).toBeFalsy();
    expect(ops.get('createPet')?.deprecated).toBeFalsy();
  });

  it('describes the error responses with the Error schema', () => {
    const document = load();
    const schemas = (document.components as { schemas: Record<string, { properties: Record<string, Json> }> }).schemas;
    expect(schemas.Error?.properties.code).toMatchObject({ enum: ERROR_CODES });
    const ops = operations(document);
    const expected: Record<string, string[]> = {
      listPets: ['400', '401', '429'],
      createPet: ['400', '401', '429'],
      getPet: ['400', '401', '404', '429'],
    };
    for (const [operationId, statuses] of Object.entries(expected)) {
      for (const status of statuses) {
        const schema = ops.get(operationId)?.responses[status]?.content?.['application/json']?.schema;
        expect(schema, `${operationId} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('documents Idempotency-Key on createPet: the optional header, 409 with Retry-After, 422, Idempotent-Replayed', () => {
    const createPet = operations(load()).get('createPet')!;
    const header = createPet.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
    expect(header).toBeDefined();
    expect(header?.required).toBeFalsy();
    for (const status of ['409', '422']) {
      expect(createPet.responses[status]?.content?.['application/json']?.schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
    }
    expect(Object.keys(createPet.responses['409']?.headers ?? {})).toContain(RATE_LIMIT_HEADERS.retryAfter);
    expect(Object.keys(createPet.responses['201']?.headers ?? {})).toEqual(
      expect.arrayContaining(['Location', IDEMPOTENCY_HEADERS.replayed]),
    );
  });

  it('describes the rate-limit headers on every response, and Retry-After on 429', () => {
    for (const operation of operations(load()).values()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = Object.keys(response.headers ?? {});
        for (const header of [RATE_LIMIT_HEADERS.limit, RATE_LIMIT_HEADERS.remaining, RATE_LIMIT_HEADERS.reset]) {
          expect(headers, `${operation.operationId} ${status}`).toContain(header);
        }
        if (status === '429') expect(headers).toContain(RATE_LIMIT_HEADERS.retryAfter);
      }
    }
  });
});

describe('the validator', () => {
  it('rejects a broken document (so the checks above can fail)', async () => {
    const broken = buildOpenApiDocument() as unknown as Json;
    const getPet = (broken.paths as Record<string, Record<string, Json>>)['/v1/pets/{petId}']?.get;
    expect(getPet).toBeDefined();
    getPet!.responses = { 200: { content: {} } }; // a response without its required description
    const result = await validateCopy(broken);
    expect(result.valid).toBe(false);
    expect(result.report).toMatch(/description/);
  });
});
