/**
 * Canary of the prom-client behaviour exposition.ts relies on (format bound to the registry, counters renamed by an
 * OpenMetrics render): both formats, in turns and at once, stay right.
 */
import { describe, expect, it } from 'vitest';
import { expose, prefersOpenMetrics } from './exposition.js';
import { Metrics } from './metrics.js';

const PROMETHEUS_2_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const TRACE = { trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', span_id: '00f067aa0ba902b7' };

function metrics(): Metrics {
  const m = new Metrics(undefined, { version: '9.9.9' });
  m.rateLimitBans.inc({ plan: 'free' });
  m.requestDuration.observe({
    labels: { http_request_method: 'GET', http_route: '/v1/pets', http_response_status_code: 200 },
    value: 0.003,
    exemplarLabels: TRACE as never,
  });
  return m;
}

function expectOpenMetrics(body: string) {
  expect(body).toContain('# TYPE animal_store_rate_limit_bans counter\n');
  expect(body).toContain('animal_store_rate_limit_bans_total{plan="free"} 1\n');
  expect(body).toMatch(
    /http_server_request_duration_seconds_bucket\{le="0.005",http_request_method="GET",http_route="\/v1\/pets",http_response_status_code="200"\} 1 # \{trace_id="4bf92f3577b34da6a3ce929d0e0e4736",span_id="00f067aa0ba902b7"\} 0.003 \d+(\.\d+)?\n/,
  );
  expect(body.endsWith('# EOF\n')).toBe(true);
}

function expectPrometheusText(body: string) {
  expect(body).toContain('# TYPE animal_store_rate_limit_bans_total counter\n');
  expect(body).toContain('animal_store_rate_limit_bans_total{plan="free"} 1\n');
  expect(body).toContain('animal_store_build_info{version="9.9.9"} 1\n');
  expect(body).not.toContain('# {');
  expect(body).not.toContain('# EOF');
}

describe('/metrics exposition', () => {
  it('serves OpenMetrics with exemplars, then Prometheus text, then OpenMetrics again', async () => {
    const { registry } = metrics();
    const first = await expose(registry, PROMETHEUS_2_ACCEPT);
    expect(first.contentType).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expectOpenMetrics(first.body);
    const text = await expose(registry, undefined);
    expect(text.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expectPrometheusText(text.body);
    expectOpenMetrics((await expose(registry, 'application/openmetrics-text')).body);
  });

  it('keeps scrapes that run at once in their own format', async () => {
    const { registry } = metrics();
    const bodies = await Promise.all(
      Array.from({ length: 6 }, (_, i) => expose(registry, i % 2 ? 'text/plain' : PROMETHEUS_2_ACCEPT)),
    );
    bodies.forEach((b, i) => (i % 2 ? expectPrometheusText(b.body) : expectOpenMetrics(b.body)));
  });

  it('chooses OpenMetrics only when the scraper prefers it', () => {
    expect(prefersOpenMetrics(PROMETHEUS_2_ACCEPT)).toBe(true);
    expect(prefersOpenMetrics('application/openmetrics-text; version=1.0.0')).toBe(true);
    expect(prefersOpenMetrics(undefined)).toBe(false);
    expect(prefersOpenMetrics('*/*')).toBe(false);
    expect(prefersOpenMetrics('text/plain;version=0.0.4')).toBe(false);
    expect(prefersOpenMetrics('application/openmetrics-text;q=0.2,text/plain;q=0.9')).toBe(false);
    expect(prefersOpenMetrics('application/openmetrics-text;q=0')).toBe(false);
  });
});
