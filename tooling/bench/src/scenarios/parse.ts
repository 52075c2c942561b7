/**
 * The contract's request validation as the server runs it on every request: listPets' query (limit, cursor), a pet's
 * id and a new pet, parsed with the contract's schemas (their preprocess and refinement steps on LeanEffects,
 * packages/contract/src/lean-effects.ts) and with the same schemas on zod's own ZodEffects, in alternating rounds. Per
 * parse: the time, and the bytes that outlive a scavenge (V8's sampling heap profiler, keeping what a mark-compact
 * collects and dropping what a scavenge does): garbage that only a mark-compact frees, the collector's pauses that
 * lengthen the tail under load (the overload scenario).
 */
import { createRequire } from 'node:module';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SERVER_DIST } from '../paths.js';
import type { Out, Scenario } from '../scenario.js';
import { median } from '../stats.js';
import { table } from '../table.js';

const PARSES = 100_000;
const ROUNDS = 3;

/** The parts of zod 3 this reads: a schema's definition, and the classes it rebuilds with. */
interface Schema {
  _def: Record<string, unknown>;
  safeParse(value: unknown): { success: boolean; data?: unknown };
}
type SchemaClass = new (def: Record<string, unknown>) => Schema;
interface Zod {
  ZodObject: SchemaClass;
  ZodOptional: SchemaClass;
  ZodEffects: SchemaClass;
}

/** Whether `schema` was made by `cls` (or a subclass); a boolean, so a miss does not narrow `schema` away. */
const madeBy = (schema: Schema, cls: SchemaClass): boolean => schema instanceof cls;

/** `schema` with every effect on zod's own ZodEffects (objects and optionals rebuilt around them); counts them. */
function onZodEffects(z: Zod, schema: Schema, effects: { n: number }): Schema {
  const def = schema._def;
  if (madeBy(schema, z.ZodObject)) {
    const shape = Object.fromEntries(
      Object.entries((def['shape'] as () => Record<string, Schema>)()).map(([k, v]) => [
        k,
        onZodEffects(z, v, effects),
      ]),
    );
    return new z.ZodObject({ ...def, shape: () => shape });
  }
  if (madeBy(schema, z.ZodOptional))
    return new z.ZodOptional({ ...def, innerType: onZodEffects(z, def['innerType'] as Schema, effects) });
  if (madeBy(schema, z.ZodEffects)) {
    if (schema.constructor === z.ZodEffects) throw new Error('parse: an effect of the contract is not LeanEffects');
    effects.n++;
    return new z.ZodEffects({ ...def, schema: onZodEffects(z, def['schema'] as Schema, effects) });
  }
  return schema;
}

interface Case {
  name: string;
  schema: Schema;
  value(i: number): unknown;
}

interface Cost {
  ns: number;
  /** Bytes a parse leaves that outlive a scavenge. */
  survivors: number;
}

/** Bytes the sampling profile holds: what was allocated while it ran and outlived a scavenge. */
function profileBytes(node: { selfSize: number; children: (typeof node)[] }): number {
  return node.children.reduce((sum, child) => sum + profileBytes(child), node.selfSize);
}

async function cost(session: Session, c: Case): Promise<Cost> {
  const values = Array.from({ length: 1000 }, (_, i) => c.value(i));
  const parseAll = () => {
    let ok = 0;
    for (let i = 0; i < PARSES; i++) if (c.schema.safeParse(values[i % values.length]).success) ok++;
    if (ok !== PARSES) throw new Error(`parse: ${c.name} refused ${PARSES - ok} valid values`);
  };
  // Timed without the profiler, whose sampling slows every allocation; then the same parses sampled.
  await session.post('HeapProfiler.collectGarbage');
  const started = process.hrtime.bigint();
  parseAll();
  const ns = Number(process.hrtime.bigint() - started) / PARSES;
  await session.post('HeapProfiler.collectGarbage');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: false,
  });
  parseAll();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  return { ns, survivors: profileBytes(profile.head) / PARSES };
}

/** The requests' values, varied as a list's pages, ids and names are. */
function cases(contract: Record<string, Schema>): Case[] {
  const cursors = Array.from({ length: 40 }, (_, i) => Buffer.from(`p1.${(i + 1) * 20}`).toString('base64url'));
  return [
    {
      name: 'listPets query (limit, cursor)',
      schema: contract['ListPetsQuery']!,
      value: (i) => ({ limit: String(1 + (i % 100)), cursor: cursors[i % 40] }),
    },
    { name: "a pet's id (path)", schema: contract['PetIdParams']!, value: (i) => ({ petId: String(1 + i) }) },
    {
      name: 'a new pet (body)',
      schema: contract['NewPet']!,
      value: (i) => ({ name: `pet ${i}`, categoryId: 1 + (i % 5), status: 'available' }),
    },
  ];
}

interface Row {
  name: string;
  effects: number;
  lean: Cost;
  zod: Cost;
}

/** One case, the contract's schema against the same on zod's effects: medians of alternating rounds. */
async function compare(session: Session, z: Zod, lean: Case): Promise<Row> {
  const effects = { n: 0 };
  const zod: Case = { ...lean, name: `${lean.name} on ZodEffects`, schema: onZodEffects(z, lean.schema, effects) };
  const [leans, zods]: [Cost[], Cost[]] = [[], []];
  await cost(session, lean);
  await cost(session, zod); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2) leans.push(await cost(session, lean));
    zods.push(await cost(session, zod));
    if (!(r % 2)) leans.push(await cost(session, lean));
  }
  const summary = (xs: Cost[]): Cost => ({
    ns: median(xs.map((x) => x.ns)),
    survivors: median(xs.map((x) => x.survivors)),
  });
  return { name: lean.name, effects: effects.n, lean: summary(leans), zod: summary(zods) };
}

function print(out: Out, rows: Row[]): void {
  out(
    `\nThe contract's request validation (in-process, ${PARSES} parses of varied values, medians of ${ROUNDS} alternating rounds): bytes a parse leaves that outlive a scavenge (only a mark-compact frees them), and time:\n`,
  );
  out(
    table(
      ['schema', 'effects', 'survivors: zod / lean (B)', 'ratio', 'ns: zod / lean', 'time vs zod'],
      rows.map((r) => [
        r.name,
        String(r.effects),
        `${r.zod.survivors.toFixed(0)} / ${r.lean.survivors.toFixed(0)}`,
        `${(r.lean.survivors / r.zod.survivors).toFixed(3)}x`,
        `${r.zod.ns.toFixed(0)} / ${r.lean.ns.toFixed(0)}`,
        `${(r.lean.ns / r.zod.ns).toFixed(2)}x`,
      ]),
    ),
  );
}

export const parse: Scenario = {
  name: 'parse',
  description: "the contract's request validation: time, and bytes left to the major GC, vs zod's own effects",
  async run() {
    console.log(`\nparse: the contract's request schemas, ${PARSES} parses, ${ROUNDS} alternating rounds ...`);
    const contractUrl = pathToFileURL(createRequire(join(SERVER_DIST, 'main.js')).resolve('@animal-store/contract'));
    const contract = (await import(contractUrl.href)) as Record<string, Schema>;
    const z = (await import(pathToFileURL(createRequire(contractUrl).resolve('zod')).href)) as Zod;
    const session = new Session();
    session.connect();
    await session.post('HeapProfiler.enable');
    const rows: Row[] = [];
    try {
      for (const c of cases(contract)) rows.push(await compare(session, z, c));
    } finally {
      await session.post('HeapProfiler.disable');
      session.disconnect();
    }
    return { json: { parse: rows }, print: (out) => print(out, rows) };
  },
};
