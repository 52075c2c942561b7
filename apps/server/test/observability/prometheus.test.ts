/**
 * A real Prometheus (Debian's binary) scrapes the built server and loads the shipped rules: the request-duration
 * series, negotiated as OpenMetrics with the trace ids of sampled requests as exemplars, are there to query. Bounded
 * in time; Prometheus listens on 127.0.0.1 only, on a free port, with a temporary config and storage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOtlpReceiver, type OtlpReceiver } from '@animal-store/test-services';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKey, type MainProcess, startMain } from '../main-process.js';

const RULES = fileURLToPath(new URL('../../../../deploy/observability/prometheus/rules.yml', import.meta.url));

let dir: string;
let server: MainProcess;
let receiver: OtlpReceiver;
let prometheus: ChildProcess | undefined;
let prometheusUrl: string;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'animal-store-prometheus-'));
  receiver = await startOtlpReceiver();
  const env = { DATABASE_URL: `file:${join(dir, 'store.db')}` };
  key = createKey(env, 'pro');
  server = await startMain({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  writeFileSync(
    join(dir, 'prometheus.yml'),
    [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      `rule_files: ['${RULES}']`,
      'scrape_configs:',
      '  - job_name: animal-store',
      `    static_configs: [{ targets: ['127.0.0.1:${server.port}'] }]`,
      '',
    ].join('\n'),
  );
  prometheus = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--enable-feature=exemplar-storage',
      '--log.level=warn',
    ],
    { stdio: 'ignore' },
  );
}, 60_000);

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    prometheus.kill('SIGKILL');
  }
  await server?.kill();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('scrapes the server and answers queries for the request-duration series, with exemplars', async () => {
  const list = () => fetch(`${server.url}/v1/pets?limit=5`, { headers: { Authorization: `Bearer ${key}` } });
  expect((await list()).status).toBe(200);

  const series = await until(async () => {
    await list();
    const result = await query(
      'sum by (http_route, http_request_method, http_response_status_code) (http_server_request_duration_seconds_count{job="animal-store"})',
    );
    return result.find((s) => s.metric.http_route === '/v1/pets') && result;
  });
  expect(series.find((s) => s.metric.http_route === '/v1/pets')?.metric).toEqual({
    http_route: '/v1/pets',
    http_request_method: 'GET',
    http_response_status_code: '200',
  });
  expect(Number(series.find((s) => s.metric.http_route === '/v1/pets')?.value[1])).toBeGreaterThanOrEqual(1);

  const perPlan = await query('sum by (operation, plan, outcome) (animal_store_operation_duration_seconds_count)');
  expect(perPlan.map((s) => s.metric)).toContainEqual({ operation: 'listPets', plan: 'pro', outcome: 'success' });

  // Prometheus asked for OpenMetrics; with tracing on, each sampled request's trace id is an exemplar.
  const exemplars = await until(async () => {
    await list();
    const now = Date.now() / 1000;
    const res = await fetch(
      `${prometheusUrl}/api/v1/query_exemplars?query=${encodeURIComponent('http_server_request_duration_seconds_bucket{http_route="/v1/pets"}')}&start=${now - 300}&end=${now + 60}`,
    );
    const body = (await res.json()) as { data: { exemplars: { labels: Record<string, string> }[] }[] };
    const found = body.data.flatMap((s) => s.exemplars);
    return found.length > 0 && found;
  });
  expect(exemplars[0]?.labels.trace_id).toMatch(/^[0-9a-f]{32}$/);
  const traced = await receiver.waitFor((spans) => spans.some((s) => s.traceId === exemplars[0]?.labels.trace_id));
  expect(traced.find((s) => s.traceId === exemplars[0]?.labels.trace_id && s.kind === 'server')?.name).toBe(
    'GET /v1/pets',
  );

  const rules = (await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as {
    data: { groups: { name: string; rules: { health: string }[] }[] };
  };
  expect(rules.data.groups.map((g) => g.name)).toContain('animal-store-slo-availability');
  expect(rules.data.groups.flatMap((g) => g.rules).every((r) => r.health !== 'err')).toBe(true);

  // The availability ratio adds load shedding's counter, which has no series until the replica sheds: the rule still
  // gives the share of the answers there are (none was a 5xx), rather than nothing.
  const availability = await until(async () => {
    await list();
    const result = await query('job:animal_store_slo_availability_errors:ratio_rate5m');
    return result.length > 0 && result;
  });
  expect(availability.map((s) => s.metric)).toEqual([
    { __name__: 'job:animal_store_slo_availability_errors:ratio_rate5m', job: 'animal-store' },
  ]);
  expect(Number(availability[0]?.value[1])).toBe(0);
}, 90_000);

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(promql: string): Promise<Sample[]> {
  const res = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.json()) as { status: string; data: { result: Sample[] } };
  expect(body.status).toBe('success');
  return body.data.result;
}

/** Retries `check` (Prometheus starting, scraping every second) until it gives a value; at most 45 s. */
async function until<T>(check: () => Promise<T | false | undefined>): Promise<T> {
  const deadline = Date.now() + 45_000;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch {
      // Prometheus not listening yet.
    }
    if (Date.now() > deadline) throw new Error('Prometheus did not show the series in time');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
