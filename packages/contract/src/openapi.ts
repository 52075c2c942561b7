import type { AppRoute, AppRouter } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import { ENVIRONMENTS, serviceOrigin } from './environments.js';
import {
  CREATED_HEADER_DOCS,
  DEPRECATION_HEADER_DOCS,
  IN_USE_RETRY_AFTER_HEADER_DOCS,
  LOCATION_HEADER_DOCS,
  NEXT_PAGE_HEADER_DOCS,
  RATE_LIMIT_HEADER_DOCS,
  RETRY_AFTER_HEADER_DOCS,
} from './headers.js';
import { adminContract } from './admin-contract.js';
import { contract, type RouteDocs } from './contract.js';

type Operation = ReturnType<NonNullable<Parameters<typeof generateOpenApi>[2]>['operationMapper'] & {}>;

const extraHeaders = {
  nextPage: NEXT_PAGE_HEADER_DOCS,
  location: LOCATION_HEADER_DOCS,
  created: CREATED_HEADER_DOCS,
  retryAfter: IN_USE_RETRY_AFTER_HEADER_DOCS,
} as const;

/** Adds what the schemas cannot say: descriptions and headers of each response, the tag, security and scope. */
const operationMapper =
  (tag: string) =>
  (operation: Operation, route: AppRoute): Operation => {
    const docs = route.metadata as RouteDocs;
    const responses: Record<string, Record<string, unknown>> = {};
    for (const [status, response] of Object.entries<Record<string, unknown>>(operation.responses)) {
      const code = Number(status);
      const headers = {
        ...RATE_LIMIT_HEADER_DOCS,
        ...(code === 429 ? RETRY_AFTER_HEADER_DOCS : {}),
        ...(route.deprecated ? DEPRECATION_HEADER_DOCS : {}),
        ...(docs.headers?.[code] ? extraHeaders[docs.headers[code]] : {}),
      };
      responses[status] = { ...response, description: docs.responses[code] ?? status, headers };
    }
    const requestBody = operation.requestBody as { content: Record<string, object> } | undefined;
    const description = [operation.description, docs.scope && `Needs the \`${docs.scope}\` scope.`]
      .filter(Boolean)
      .join(' ');
    return {
      ...operation,
      ...(description ? { description } : {}),
      tags: [tag],
      security: [{ bearerAuth: [] }],
      ...(requestBody
        ? { requestBody: { ...requestBody, required: true, description: docs.requestBody ?? 'The request body.' } }
        : {}),
      responses,
    };
  };

const servers = [
  { url: serviceOrigin(ENVIRONMENTS.production), description: 'Production' },
  { url: serviceOrigin(ENVIRONMENTS.staging), description: 'Staging' },
];

function document(router: AppRouter, tag: string, info: { title: string; description: string }, bearer: string) {
  return generateOpenApi(
    router,
    {
      info: { ...info, version: '1.0.0' },
      servers,
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: bearer } } },
      security: [{ bearerAuth: [] }],
    },
    { setOperationId: true, operationMapper: operationMapper(tag) },
  );
}

/** The OpenAPI 3 document of the interface, generated from the contract. */
export function buildOpenApiDocument() {
  return document(
    contract,
    'pets',
    {
      title: 'Animal Store API',
      description:
        "Keeps a store's catalogue of animals. Every operation needs `Authorization: Bearer <API key>`. " +
        'Every response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`.',
    },
    'An API key, e.g. `ask_...`.',
  );
}

/** The OpenAPI 3 document of the admin API (`/admin/v1`), generated from its own contract. */
export function buildAdminOpenApiDocument() {
  return document(
    adminContract,
    'keys',
    {
      title: 'Animal Store admin API',
      description:
        'Manages API keys: create, list, inspect, change, revoke, rotate, usage, lift a ban. Every operation needs ' +
        "`Authorization: Bearer <ADMIN_TOKEN>`; without the service's `ADMIN_TOKEN` every route answers 404. Limited " +
        "per client address (`X-RateLimit-*`), never charged to a key's plan.",
    },
    "The service's `ADMIN_TOKEN` (at least 32 characters).",
  );
}
