/**
 * Build step: writes dist/openapi.json and dist/admin-openapi.json from the contracts (published as
 * `@animal-store/contract/openapi.json` and `@animal-store/contract/admin-openapi.json`).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildAdminOpenApiDocument, buildOpenApiDocument } from '../openapi.js';

for (const [file, build] of [
  ['openapi.json', buildOpenApiDocument],
  ['admin-openapi.json', buildAdminOpenApiDocument],
] as const) {
  const target = fileURLToPath(new URL(`../../dist/${file}`, import.meta.url));
  writeFileSync(target, `${JSON.stringify(build(), null, 2)}\n`);
  console.log(`wrote ${target}`);
}
