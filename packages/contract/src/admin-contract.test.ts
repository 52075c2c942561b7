import { compileErrors, validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { adminContract } from './admin-contract.js';
import { ApiKeyChanges, NewApiKey, RotateApiKey } from './admin-schemas.js';
import { buildAdminOpenApiDocument, buildOpenApiDocument } from './openapi.js';
import { contract } from './contract.js';

type Operation = { operationId: string; description?: string; security?: unknown; responses: Record<string, unknown> };

function operations(document: { paths: unknown }): Map<string, Operation> {
  const found = new Map<string, Operation>();
  for (const item of Object.values(document.paths as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(item)) found.set(operation.operationId, operation);
  }
  return found;
}

describe('admin contract', () => {
  it('has its own valid OpenAPI document, one operation per route under /admin/v1, all behind the bearer token', async () => {
    const document = buildAdminOpenApiDocument() as unknown as { paths: Record<string, Record<string, Operation>> };
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
    const ops = operations(document);
    expect([...ops.keys()].sort()).toEqual(Object.keys(adminContract).sort());
    for (const [name, route] of Object.entries(adminContract)) {
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      expect(path.startsWith('/admin/v1/keys')).toBe(true);
      expect(document.paths[path]?.[route.method.toLowerCase()]?.operationId).toBe(name);
      expect(ops.get(name)?.security).toEqual([{ bearerAuth: [] }]);
    }
    // The public document has none of them.
    expect(
      Object.keys((buildOpenApiDocument() as unknown as { paths: object }).paths).some((p) => p.startsWith('/admin')),
    ).toBe(false);
  });

  it('the public document names the scope of each pets operation and its 403', () => {
    const ops = operations(buildOpenApiDocument());
    expect(ops.get('listPets')?.description).toContain('`pets:read`');
    expect(ops.get('createPet')?.description).toContain('`pets:write`');
    expect(ops.get('createPet')?.responses['403']).toBeDefined();
    expect(ops.get('getRateLimit')?.responses['200']).toBeDefined();
    expect(Object.keys(contract)).toContain('getRateLimit');
  });

  it('refuses unknown fields, so a misspelt field cannot widen a key', () => {
    expect(NewApiKey.safeParse({ plan: 'pro', scope: ['pets:read'] }).success).toBe(false);
    expect(NewApiKey.safeParse({ plan: 'pro', scopes: ['pets:read'] }).success).toBe(true);
    expect(ApiKeyChanges.safeParse({}).success).toBe(false);
    expect(ApiKeyChanges.safeParse({ name: null, expiresAt: null }).success).toBe(true);
    expect(RotateApiKey.safeParse({}).success).toBe(true);
    expect(RotateApiKey.safeParse({ overlapSeconds: 30 * 86_400 + 1 }).success).toBe(false);
  });

  it.each([
    ['scopes', { plan: 'pro', scopes: [] }],
    ['scopes', { plan: 'pro', scopes: ['pets:read', 'pets:read'] }],
    ['expiresAt', { plan: 'pro', expiresAt: '2030-01-01' }],
    ['perDay', { plan: 'enterprise', perMinute: 1, perDay: 1.5 }],
  ])('names the field (%s) of a bad body', (field, body) => {
    const parsed = NewApiKey.safeParse(body);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path[0]).toBe(field);
  });
});
