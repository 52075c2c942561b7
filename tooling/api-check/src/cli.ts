/**
 * `pnpm api:check`: compares today's OpenAPI documents (the contract's build, dist/) with those of the last release
 * (packages/contract/released/, written by `pnpm api:snapshot` when `pnpm version-packages` makes a release). Exits 1
 * on a breaking change unless a pending changeset bumps the contract's major version; additive changes pass.
 * `pnpm api:snapshot` copies today's documents over the released ones.
 *
 *   tsx src/cli.ts check|snapshot [--released DIR] [--current DIR] [--root DIR]
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Change, compareDocuments } from './openapi-diff.js';
import { CONTRACT, contractBump } from './release-plan.js';

const DOCUMENTS = ['openapi.json', 'admin-openapi.json'];
const contractDir = dirname(createRequire(import.meta.url).resolve(`${CONTRACT}/package.json`));

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    released: { type: 'string', default: join(contractDir, 'released') },
    current: { type: 'string', default: join(contractDir, 'dist') },
    root: { type: 'string', default: fileURLToPath(new URL('../../../', import.meta.url)) },
  },
});
const read = (dir: string, file: string) =>
  JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;

/** One line per kind of change (a new error code touches every response): what changed, then where. */
function grouped(changes: Change[]): Map<string, string[]> {
  const lines = new Map<string, string[]>();
  for (const change of changes) {
    const line = `${change.breaking ? 'BREAKING' : 'additive'} ${change.rule}: ${change.detail}`;
    lines.set(line, [...(lines.get(line) ?? []), change.where]);
  }
  return lines;
}

if (positionals[0] === 'snapshot') {
  for (const file of DOCUMENTS) copyFileSync(join(values.current, file), join(values.released, file));
  console.log(`api:snapshot: ${DOCUMENTS.join(', ')} copied to ${values.released}`);
} else if (positionals[0] === 'check') {
  const breaking: Change[] = [];
  for (const file of DOCUMENTS) {
    const changes = compareDocuments(read(values.released, file), read(values.current, file));
    console.log(`${file}: ${changes.length === 0 ? 'unchanged' : `${changes.length} change(s)`}`);
    for (const [line, places] of grouped(changes))
      console.log(
        `  ${line}\n    at ${places.slice(0, 3).join('; ')}${places.length > 3 ? ` and ${places.length - 3} more` : ''}`,
      );
    breaking.push(...changes.filter((change) => change.breaking));
  }
  if (breaking.length > 0) {
    const bump = await contractBump(values.root);
    if (bump === 'major') {
      console.log(`api:check: ${breaking.length} breaking change(s), allowed: a changeset bumps ${CONTRACT}'s major`);
    } else {
      console.error(
        `api:check: ${breaking.length} breaking change(s) to the released API (the contract's next release is ` +
          `${bump}). Make the change additive (docs/api-versioning.md), or add a changeset with a major bump of ` +
          `${CONTRACT} (pnpm changeset) and announce it.`,
      );
      process.exitCode = 1;
    }
  } else console.log('api:check: no breaking change');
} else {
  console.error('usage: cli.ts check|snapshot [--released DIR] [--current DIR] [--root DIR]');
  process.exitCode = 2;
}
