/**
 * Tracing off costs nothing to load: a server started without an OTLP endpoint never resolves a module of the
 * OpenTelemetry SDK or its exporters (seen by a module-resolution hook in the server process), while one started with
 * an endpoint does.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOtlpReceiver } from '@animal-store/test-services';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey, startMain } from '../main-process.js';

let dir: string;
let env: Record<string, string>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'animal-store-tracing-off-'));
  // Node's module hooks (module.register): every specifier the process resolves, one per line.
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  appendFileSync(${JSON.stringify(join(dir, 'resolved.log'))}, specifier + '\\n');
  return next(specifier, context);
}`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${join(dir, 'hooks.mjs')}`)});\n`,
  );
  env = { DATABASE_URL: `file:${join(dir, 'store.db')}` };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function resolvedWhileServing(extra: Record<string, string>): Promise<string[]> {
  rmSync(join(dir, 'resolved.log'), { force: true });
  const key = createKey(env, 'free');
  const server = await startMain({ ...env, ...extra, NODE_OPTIONS: `--import=${join(dir, 'register.mjs')}` });
  try {
    const res = await fetch(`${server.url}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
  } finally {
    await server.kill();
  }
  return readFileSync(join(dir, 'resolved.log'), 'utf8').split('\n');
}

const SDK =
  /@opentelemetry\/(sdk-trace|exporter-trace|otlp-exporter-base|otlp-transformer|resources|context-async-hooks|core)|@prisma\/instrumentation|telemetry\/(sdk|otlp-\w+|lean-\w+|random-ids)\.js/;

it('loads no part of the SDK without an endpoint, and loads it with one', async () => {
  const off = await resolvedWhileServing({});
  expect(off.some((s) => s.includes('main.js'))).toBe(true);
  expect(off.filter((s) => SDK.test(s))).toEqual([]);

  const receiver = await startOtlpReceiver();
  try {
    const on = await resolvedWhileServing({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
    expect(on.filter((s) => SDK.test(s)).length).toBeGreaterThan(3);
  } finally {
    await receiver.close();
  }
}, 60_000);
