import type { z } from 'zod';

export type OpenApiMeta = Record<string, unknown>;

/**
 * Attaches OpenAPI metadata to a schema. `metaOpenApi` is the field @ts-rest/open-api's schema generator
 * (@anatine/zod-openapi) reads; setting it directly keeps that generator out of the runtime of the client.
 */
export function openApi<T extends z.ZodTypeAny>(schema: T, meta: OpenApiMeta): T {
  const target = schema as T & { metaOpenApi?: OpenApiMeta };
  target.metaOpenApi = { ...target.metaOpenApi, ...meta };
  return schema;
}
