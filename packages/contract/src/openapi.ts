import type { AppRoute } from '@ts-rest/core';
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
import { contract, type RouteDocs } from './contract.js';

type Operation = ReturnType<NonNullable<Parameters<typeof generateOpenApi>[2]>['operationMapper'] & {}>;

const extraHeaders = {
  nextPage: NEXT_PAGE_HEADER_DOCS,
  location: LOCATION_HEADER_DOCS,
  created: CREATED_HEADER_DOCS,
  retryAfter: IN_USE_RETRY_AFTER_HEADER_DOCS,
} as const;

function mapOperation(operation: Operation, route: AppRoute): Operation {
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
  return {
    ...operation,
    tags: ['pets'],
    security: [{ bearerAuth: [] }],
    ...(requestBody ? { requestBody: { ...requestBody, required: true, description: 'The animal to add.' } } : {}),
    responses,
  };
}

/** The OpenAPI 3 document of the interface, generated from the contract. */
export function buildOpenApiDocument() {
  return generateOpenApi(
    contract,
    {
      info: {
        title: 'Animal Store API',
        version: '1.0.0',
        description:
          "Keeps a store's catalogue of animals. Every operation needs `Authorization: Bearer <API key>`. " +
          'Every response carries `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`.',
      },
      servers: [
        { url: serviceOrigin(ENVIRONMENTS.production), description: 'Production' },
        { url: serviceOrigin(ENVIRONMENTS.staging), description: 'Staging' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key, e.g. `ask_...`.' },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    { setOperationId: true, operationMapper: mapOperation },
  );
}
