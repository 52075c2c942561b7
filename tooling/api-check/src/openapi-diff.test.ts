/**
 * Each change docs/api-versioning.md lists, made to today's real documents (the contract's build), is classed right:
 * every breaking one caught, every additive one passed.
 */
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return -- the tests edit documents freely */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { compareDocuments } from './openapi-diff.js';

type Json = Record<string, any>;
const load = (file: string) =>
  JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`@animal-store/contract/${file}`), 'utf8')) as Json;
const publicApi = load('openapi.json');
const adminApi = load('admin-openapi.json');

const schemas = (d: Json) => d.components.schemas as Json;
const listPets = (d: Json) => d.paths['/v1/pets'].get as Json;
const createPet = (d: Json) => d.paths['/v1/pets'].post as Json;
const getPet = (d: Json) => d.paths['/v1/pets/{petId}'].get as Json;
const param = (operation: Json, name: string) => (operation.parameters as Json[]).find((p) => p.name === name)!;

function changed(edit: (document: Json) => void, base = publicApi) {
  const next = structuredClone(base);
  edit(next);
  return compareDocuments(base, next);
}

describe('today against itself', () => {
  it.each([
    ['public', publicApi],
    ['admin', adminApi],
  ])('%s: no change', (_name, document) => {
    expect(compareDocuments(document, structuredClone(document))).toEqual([]);
  });
});

describe.each<[string, (d: Json) => void, string]>([
  ['a removed path', (d) => delete d.paths['/v1/rate_limit'], 'path-removed'],
  ['a removed operation', (d) => delete d.paths['/v1/pets'].post, 'operation-removed'],
  [
    'a removed parameter',
    (d) => (listPets(d).parameters = listPets(d).parameters.filter((p: Json) => p.name !== 'cursor')),
    'parameter-removed',
  ],
  ['a removed response field', (d) => delete schemas(d).Pet.properties.status, 'response-property-removed'],
  [
    'a removed required response field',
    (d) => {
      delete schemas(d).Pet.properties.name;
      schemas(d).Pet.required = schemas(d).Pet.required.filter((n: string) => n !== 'name');
    },
    'response-property-removed',
  ],
  [
    'a response field made optional',
    (d) => (schemas(d).Pet.required = ['name', 'categoryId']),
    'response-property-required',
  ],
  [
    'a removed enum value of a request',
    (d) => (schemas(d).NewPet.properties.status.enum = ['available', 'pending']),
    'request-enum-value',
  ],
  [
    'a removed enum value of a query parameter',
    (d) => (param(listPets(d), 'status').schema.enum = ['available']),
    'parameter-narrowed',
  ],
  [
    'a new required request field',
    (d) => {
      schemas(d).NewPet.properties.age = { type: 'integer' };
      schemas(d).NewPet.required.push('age');
    },
    'request-property-required',
  ],
  [
    'a new required parameter',
    (d) => listPets(d).parameters.push({ name: 'owner', in: 'query', required: true, schema: { type: 'string' } }),
    'parameter-added-required',
  ],
  ['an optional parameter made required', (d) => (param(listPets(d), 'status').required = true), 'parameter-required'],
  ['a shorter name maximum', (d) => (schemas(d).NewPet.properties.name.maxLength = 100), 'request-max-length'],
  ['a smaller limit maximum', (d) => (param(listPets(d), 'limit').schema.maximum = 50), 'parameter-narrowed'],
  ['a larger limit minimum', (d) => (param(listPets(d), 'limit').schema.minimum = 5), 'parameter-narrowed'],
  ['a narrower request type', (d) => (schemas(d).NewPet.properties.categoryId.type = 'string'), 'request-type'],
  ['a wider response type', (d) => (schemas(d).Pet.properties.id.type = ['integer', 'string']), 'response-type'],
  [
    'a changed status code',
    (d) => {
      createPet(d).responses['200'] = createPet(d).responses['201'];
      delete createPet(d).responses['201'];
    },
    'response-status-removed',
  ],
  [
    'a changed request media type',
    (d) => {
      const content = createPet(d).requestBody.content;
      content['application/merge-patch+json'] = content['application/json'];
      delete content['application/json'];
    },
    'request-media-type-removed',
  ],
  [
    'a changed response media type',
    (d) => {
      const content = listPets(d).responses['200'].content;
      content['text/plain'] = content['application/json'];
      delete content['application/json'];
    },
    'response-media-type-removed',
  ],
  [
    'a removed response header',
    (d) => delete createPet(d).responses['201'].headers.Location,
    'response-header-removed',
  ],
  [
    'a new pattern on a request field',
    (d) => (schemas(d).NewPet.properties.name.pattern = '^[a-z]+$'),
    'request-pattern',
  ],
])('breaking: %s', (_name, edit, rule) => {
  it(`is caught as ${rule}`, () => {
    const changes = changed(edit);
    expect(changes.filter((c) => c.breaking).map((c) => c.rule)).toContain(rule);
  });
});

describe.each<[string, (d: Json) => void, string, Json?]>([
  [
    'a new optional response field',
    (d) => (schemas(d).Pet.properties.color = { type: 'string' }),
    'response-property-added',
  ],
  ['a wider request range (limit maximum 200)', (d) => (param(listPets(d), 'limit').schema.maximum = 200), ''],
  ['a longer name maximum', (d) => (schemas(d).NewPet.properties.name.maxLength = 500), ''],
  [
    'a new optional request field',
    (d) => (schemas(d).NewPet.properties.tag = { type: 'string', maxLength: 20 }),
    'request-property-added',
  ],
  [
    'a new optional parameter',
    (d) => listPets(d).parameters.push({ name: 'tag', in: 'query', schema: { type: 'string' } }),
    'parameter-added',
  ],
  ['a new operation', (d) => (d.paths['/v1/tags'] = { get: structuredClone(getPet(d)) }), 'operation-added'],
  [
    'a new response status (418)',
    (d) => (getPet(d).responses['418'] = structuredClone(getPet(d).responses['404'])),
    'response-status-added',
  ],
  ['a new error code', (d) => schemas(d).Error.properties.code.enum.push('teapot'), 'response-enum-value'],
  ['a new enum value accepted in a request', (d) => schemas(d).NewPet.properties.status.enum.push('reserved'), ''],
  [
    'a renamed path parameter',
    (d) => {
      d.paths['/v1/pets/{id}'] = d.paths['/v1/pets/{petId}'];
      delete d.paths['/v1/pets/{petId}'];
      param(getPet({ paths: { '/v1/pets/{petId}': d.paths['/v1/pets/{id}'] } }), 'petId').name = 'id';
    },
    '',
  ],
  [
    'a new admin key field',
    (d) => (schemas(d).ApiKey.properties.deprecatedCallAt = { type: 'string', nullable: true }),
    '',
    adminApi,
  ],
])('additive: %s', (_name, edit, rule, base) => {
  it('passes', () => {
    const changes = changed(edit, base);
    expect(changes.filter((c) => c.breaking)).toEqual([]);
    if (rule) expect(changes.map((c) => c.rule)).toContain(rule);
  });
});
