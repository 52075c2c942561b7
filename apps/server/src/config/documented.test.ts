import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_STATUS } from '@animal-store/contract';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ENV_VARIABLES } from './env.js';
import { SERVER_ROOT } from './server-root.js';

const README = readFileSync(join(SERVER_ROOT, '../../README.md'), 'utf8');

/** The rows of the first table after `marker`, as arrays of trimmed cells (header and rule rows left out). */
function tableAfter(marker: string): string[][] {
  expect(README).toContain(marker);
  const section = README.slice(README.indexOf(marker));
  const lines = section.split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, '').trim()));
  }
  return rows;
}

/** What the README shows as a variable's default: the schema's default in backticks, or `unset`. */
function documentedDefault(schema: z.ZodTypeAny): string {
  return schema instanceof z.ZodDefault ? `\`${String(schema._def.defaultValue())}\`` : 'unset';
}

describe('the README', () => {
  it('documents every variable of the configuration with its default, and no other', () => {
    const rows = tableAfter('\n## Configuration\n');
    const documented = Object.fromEntries(rows.map(([name, byDefault]) => [name!.replace(/`/g, ''), byDefault]));
    const expected = Object.fromEntries(
      Object.entries(ENV_VARIABLES).map(([name, schema]) => [name, documentedDefault(schema as z.ZodTypeAny)]),
    );
    expect(documented).toEqual(expected);
    expect(rows.length, 'each variable once').toBe(Object.keys(expected).length);
  });

  it('lists every error code with its status, and no other', () => {
    const documented: Record<string, number> = {};
    for (const [status, codes] of tableAfter('**Errors.**')) {
      for (const code of codes!.match(/`[a-z_]+`/g) ?? []) documented[code.replace(/`/g, '')] = Number(status);
    }
    expect(documented).toEqual({ ...ERROR_STATUS });
  });
});
