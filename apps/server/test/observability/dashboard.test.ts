/**
 * The Grafana dashboard and the Prometheus rules that ship with the service name only metrics the server exports
 * (read from a running server's /metrics on PostgreSQL, where every family is present) or rules that record them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { withTestServer } from '../helpers.js';

const deploy = (path: string) => fileURLToPath(new URL(`../../../../deploy/observability/${path}`, import.meta.url));
const RULES = readFileSync(deploy('prometheus/rules.yml'), 'utf8');

interface Panel {
  type: string;
  id: number;
  title: string;
  datasource?: { uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
}
const dashboard = JSON.parse(readFileSync(deploy('grafana/animal-store.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string }[] };
};

/** Every series name a PromQL expression selects (an identifier followed by a selector or a range). */
function metricNames(expr: string): string[] {
  const names = [...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{[]/g)].map((m) => m[1]!);
  return names.filter((name) => !['by', 'without', 'on', 'ignoring', 'group_left', 'group_right'].includes(name));
}

/** The names a scrape of the server shows, each histogram family with its three series. */
let exported: Set<string>;
const recorded = new Set([...RULES.matchAll(/record: (\S+)/g)].map((m) => m[1]!));

beforeAll(async () => {
  const text = await withTestServer('postgresql', {}, async (server) => (await fetch(`${server.url}/metrics`)).text());
  exported = new Set(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
      type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name!],
    ),
  );
});

describe('the Grafana dashboard', () => {
  const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, ...t })));

  it('parses, with unique panel ids and every query on the chosen Prometheus', () => {
    expect(dashboard.uid).toBe('animal-store');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'job', 'instance']);
    expect(targets.length).toBeGreaterThan(20);
    for (const t of targets) expect(t.datasource?.uid, t.panel).toBe('${datasource}');
  });

  it('names only metrics the server exports, or SLO ratios the rules record', () => {
    for (const t of targets) {
      const names = metricNames(t.expr);
      expect(names.length, `${t.panel}: ${t.expr}`).toBeGreaterThan(0);
      for (const name of names) expect(exported.has(name) || recorded.has(name), `${t.panel}: ${name}`).toBe(true);
    }
  });

  it('shows RED by route and plan, the limiter, dependencies, load shedding, event-loop delay and GC', () => {
    const all = targets.map((t) => t.expr).join('\n');
    for (const name of [
      'http_server_request_duration_seconds_bucket',
      'animal_store_operation_duration_seconds_count',
      'animal_store_rate_limit_refusals_total',
      'animal_store_rate_limit_bans_total',
      'animal_store_dependency_failures_total',
      'animal_store_load_shed_total',
      'animal_store_concurrency_refusals_total',
      'animal_store_load_shed_level',
      'db_client_connection_count',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_gc_duration_seconds_sum',
    ])
      expect(all).toContain(name);
  });
});

describe('the Prometheus rules', () => {
  it('name only metrics the server exports (or Prometheus its own up)', () => {
    const exprs = [...RULES.matchAll(/expr: \|\n((?: {10}.*\n)+)/g)].map((m) => m[1]!);
    expect(exprs.length).toBeGreaterThan(30);
    for (const expr of exprs)
      for (const name of metricNames(expr))
        expect(exported.has(name) || recorded.has(name) || name === 'up', `${name} in ${expr}`).toBe(true);
  });
});
