/**
 * The built package and its optional peer `@opentelemetry/api`, in plain `node`: with the API and an SDK registered,
 * both builds send the caller's trace; installed where the API cannot be resolved at all, both still work.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Peer, RATE_HEADERS, startPeer } from './test-support/peer.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

/** Lists pets inside an active span when an SDK can be set up; prints what the peer saw and the caller's trace id. */
const script = (load: (name: string) => string) => `
  ${load('@animal-store/client')}
  let traceId = null;
  let api = null;
  try {
    ${load('@opentelemetry/api').replace('const mod', 'api')}
    const { W3CTraceContextPropagator } = ${load('@opentelemetry/core').replace('const mod = ', '')};
    const { AsyncLocalStorageContextManager } = ${load('@opentelemetry/context-async-hooks').replace('const mod = ', '')};
    const { TracerProvider } = ${load('@opentelemetry/sdk-trace').replace('const mod = ', '')};
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    api.trace.setGlobalTracerProvider(new TracerProvider());
  } catch { api = null; }
  const client = mod.createAnimalStoreClient({ baseUrl: process.env.PEER_URL, apiKey: 'k' });
  const list = () => client.listPets({ query: { limit: 1 } });
  const call = api
    ? api.trace.getTracer('app').startActiveSpan('caller', (span) => {
        traceId = span.spanContext().traceId;
        return list().finally(() => span.end());
      })
    : list();
  call.then((result) => console.log(JSON.stringify({ status: result.status, traceId })));
`;

const BUILDS = [
  ['CJS', (name: string) => `const mod = require('${name}');`, ['-e']],
  ['ESM', (name: string) => `const mod = await import('${name}');`, ['--input-type=module', '-e']],
] as const;

let peer: Peer;
beforeAll(async () => {
  peer = await startPeer([{ status: 200, body: [], headers: RATE_HEADERS }]);
});
afterAll(() => peer.close());

/** The environment without NODE_PATH, which pnpm's runner points at every package of the store. */
const { NODE_PATH: _nodePath, ...plainEnv } = process.env;

async function listFrom(cwd: string, load: (name: string) => string, flags: readonly string[]) {
  const before = peer.requests.length;
  const { stdout } = await run(process.execPath, [...flags, script(load)], {
    cwd,
    env: { ...plainEnv, PEER_URL: peer.baseUrl },
    timeout: 20_000,
  });
  return { ...(JSON.parse(stdout) as { status: number; traceId: string | null }), sent: peer.requests[before] };
}

describe.each(BUILDS)('the %s build', (_name, load, flags) => {
  it('sends the active trace as traceparent when @opentelemetry/api and an SDK are there', async () => {
    expect(existsSync(join(packageDir, 'dist/index.js')), 'run the build first').toBe(true);
    const { status, traceId, sent } = await listFrom(packageDir, load, flags);
    expect(status).toBe(200);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(sent?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });

  it('works where @opentelemetry/api cannot be resolved, sending no trace header', async () => {
    const app = isolatedInstall();
    try {
      await expect(
        run(process.execPath, ['-e', `require.resolve('@opentelemetry/api')`], { cwd: app, env: plainEnv }),
      ).rejects.toThrow(/Cannot find module '@opentelemetry\/api'/);
      const { status, traceId, sent } = await listFrom(app, load, flags);
      expect(traceId).toBeNull();
      expect(status).toBe(200);
      expect(sent?.headers.traceparent).toBeUndefined();
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });
});

/** An app folder whose node_modules has the built client and its dependencies (package.json's), nothing else. */
function isolatedInstall(): string {
  const app = mkdtempSync(join(tmpdir(), 'client-no-otel-'));
  const target = join(app, 'node_modules/@animal-store/client');
  mkdirSync(target, { recursive: true });
  cpSync(join(packageDir, 'dist'), join(target, 'dist'), { recursive: true });
  cpSync(join(packageDir, 'package.json'), join(target, 'package.json'));
  const fromClient = createRequire(join(packageDir, 'package.json'));
  const { dependencies = {} } = fromClient('./package.json') as { dependencies?: Record<string, string> };
  for (const dependency of Object.keys(dependencies)) {
    const root = realpathSync(dirname(fromClient.resolve(`${dependency}/package.json`)));
    mkdirSync(dirname(join(app, 'node_modules', dependency)), { recursive: true });
    symlinkSync(root, join(app, 'node_modules', dependency), 'dir');
  }
  return app;
}
