#!/usr/bin/env node
// A tiny CLI on the built @animal-store/client (plain JavaScript, no build step).
//   ANIMAL_STORE_URL=http://127.0.0.1:3000/v1 ANIMAL_STORE_API_KEY=... node index.js list [--status sold] [--page-size 50]
//   ANIMAL_STORE_URL=... ANIMAL_STORE_API_KEY=... node index.js create <name> <categoryId> [--status available]
import { parseArgs } from 'node:util';
import { AnimalStoreError, PetStatus, createAnimalStoreClient } from '@animal-store/client';

const USAGE = `usage:
  animal-store list [--status available|pending|sold] [--page-size 1-100]
  animal-store create <name> <categoryId> [--status available|pending|sold]
environment: ANIMAL_STORE_API_KEY (required), ANIMAL_STORE_URL (base URL ending in /v1; default: production)`;

class UsageError extends Error {}

/** One pet per line: id, name, categoryId, status, separated by tabs. */
const line = (pet) => [pet.id, pet.name, pet.categoryId, pet.status ?? ''].join('\t');

/** A decimal integer that a JSON number carries exactly. */
function positiveInteger(text, name) {
  const value = /^[1-9][0-9]*$/.test(text ?? '') ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value))
    throw new UsageError(`${name} must be a positive integer up to ${Number.MAX_SAFE_INTEGER}`);
  return value;
}

function status(text) {
  if (text === undefined) return undefined;
  const parsed = PetStatus.safeParse(text);
  if (!parsed.success) throw new UsageError(`--status must be one of ${PetStatus.options.join(', ')}`);
  return parsed.data;
}

async function main(argv, env, out) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { status: { type: 'string' }, 'page-size': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command, ...rest] = positionals;
  if (values.help) {
    out.log(USAGE);
    return 0;
  }
  if (!env.ANIMAL_STORE_API_KEY) throw new UsageError('ANIMAL_STORE_API_KEY is not set');
  const client = createAnimalStoreClient({
    apiKey: env.ANIMAL_STORE_API_KEY,
    ...(env.ANIMAL_STORE_URL ? { baseUrl: env.ANIMAL_STORE_URL } : {}),
  });

  if (command === 'list' && rest.length === 0) {
    const pageSize =
      values['page-size'] === undefined ? undefined : positiveInteger(values['page-size'], '--page-size');
    for await (const pet of client.paginatePets({ status: status(values.status), pageSize })) out.log(line(pet));
    return 0;
  }
  if (command === 'create' && rest.length === 2) {
    const [name, categoryId] = rest;
    const body = { name, categoryId: positiveInteger(categoryId, 'categoryId') };
    const petStatus = status(values.status);
    if (petStatus) body.status = petStatus;
    const result = await client.createPet({ body });
    if (result.status !== 201) {
      out.error(`create failed: ${result.status} ${result.body?.code ?? ''} ${result.body?.message ?? ''}`.trim());
      return 1;
    }
    out.log(line(result.body));
    return 0;
  }
  throw new UsageError(command ? `unknown command or arguments: ${positionals.join(' ')}` : 'no command given');
}

main(process.argv.slice(2), process.env, console).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    if (error instanceof UsageError || String(error?.code).startsWith('ERR_PARSE_ARGS')) {
      console.error(`${error.message}\n${USAGE}`);
      process.exitCode = 2;
    } else {
      console.error(error instanceof AnimalStoreError ? error.message : `unexpected error: ${error?.message ?? error}`);
      process.exitCode = 1;
    }
  },
);
