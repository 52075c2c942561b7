#!/usr/bin/env node
// The SLOs and alerts of the service, stated once here; `node slo-rules.mjs` writes rules.yml from them, and
// `--check` (CI) fails when the committed file is not that output. Burn-rate alerts follow the multi-window, multi-burn-rate pattern of the
// Google SRE workbook (chapter "Alerting on SLOs"): a long window proves the budget is burning, a short one that it
// still is, so an alert fires within minutes of a bad deploy and resolves soon after the fix.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const JOB = 'animal-store';
const REQUESTS = 'http_server_request_duration_seconds';
const API = `job="${JOB}",http_route=~"/(v1|admin/v1)/.*"`;
const API_ANSWERS = `${REQUESTS}_count{${API}}`;
/**
 * Load shedding's 503s: answered at the door, before Express (docs/overload.md), so they are not in the request
 * histogram and are counted from their own counter, among the answers and among the bad ones. The counter has no series
 * until a replica first sheds, so it is joined with `or`, which keeps the other side's samples, never with `+`, which
 * would drop every sample that has no partner.
 */
const SHED = `animal_store_load_shed_total{job="${JOB}"}`;

/**
 * Every SLO: `errors` and `total` are rate() selectors (one, or several whose rates are added) over one window `[W]`;
 * the objective is the good share.
 */
export const SLOS = [
  {
    name: 'availability',
    summary: 'answers to /v1 and /admin/v1 that are not 5xx',
    objective: 0.999,
    total: [API_ANSWERS, SHED],
    errors: [`${REQUESTS}_count{${API},http_response_status_code=~"5.."}`, SHED],
  },
  latencySlo('list_latency', 'GET', '0.1', 'list answers (GET /v1/pets) within 100 ms'),
  latencySlo('create_latency', 'POST', '0.25', 'create answers (POST /v1/pets) within 250 ms'),
];

/** The share of successful answers of one route slower than `le` (a bucket boundary of the histogram). */
function latencySlo(name, method, le, summary) {
  const route = `job="${JOB}",http_route="/v1/pets",http_request_method="${method}",http_response_status_code=~"[23].."`;
  return {
    name,
    summary,
    objective: 0.99,
    total: `${REQUESTS}_count{${route}}`,
    // Slower than `le` = all answers minus those within it.
    errors: null,
    within: `${REQUESTS}_bucket{${route},le="${le}"}`,
  };
}

/** Windows (short, long), burn rate and severity: 2 % of a 30-day budget in 1 h, 5 % in 6 h, 10 % in 1 d and 3 d. */
export const BURN_RATES = [
  { short: '5m', long: '1h', factor: 14.4, severity: 'page', for: '2m' },
  { short: '30m', long: '6h', factor: 6, severity: 'page', for: '15m' },
  { short: '2h', long: '1d', factor: 3, severity: 'ticket', for: '1h' },
  { short: '6h', long: '3d', factor: 1, severity: 'ticket', for: '3h' },
];

const WINDOWS = [...new Set(BURN_RATES.flatMap((b) => [b.short, b.long]))];

const ratioName = (slo, window) => `job:animal_store_slo_${slo.name}_errors:ratio_rate${window}`;

/** The rates of `selectors` (one or several, of disjoint label sets) over `window`, as one vector to sum. */
const rates = (selectors, window) =>
  [selectors]
    .flat()
    .map((s) => `rate(${s}[${window}])`)
    .join(' or ');

function ratioExpr(slo, window) {
  const total = `sum by (job) (${rates(slo.total, window)})`;
  // A bad answer has no series until the first one happens (a counter with that status, the shed counter): `or` with
  // none of the answers then gives a share of 0, where the bad side alone would leave the ratio without a sample.
  const bad = slo.errors
    ? `(sum by (job) (${rates(slo.errors, window)}) or 0 * ${total})`
    : `(${total} - sum by (job) (rate(${slo.within}[${window}])))`;
  return `${bad}\n/\n${total}`;
}

function burnAlert(slo) {
  return BURN_RATES.map((b) => {
    const threshold = `${b.factor} * ${(1 - slo.objective).toFixed(4)}`;
    return {
      alert: `AnimalStore${camel(slo.name)}BudgetBurn`,
      expr: `${ratioName(slo, b.long)} > (${threshold})\nand\n${ratioName(slo, b.short)} > (${threshold})`,
      for: b.for,
      labels: { severity: b.severity, slo: slo.name, long_window: b.long, short_window: b.short },
      annotations: {
        summary: `${slo.name} SLO: error budget burning ${b.factor}x too fast`,
        description: `Over ${b.long} and ${b.short}, the share of bad answers ({{ $value | humanizePercentage }} over ${b.long}) is above ${b.factor} times the budget of the ${slo.objective * 100} % objective (${slo.summary}). At this rate the 30-day budget lasts ${Math.round((30 * 24) / b.factor)} h.`,
        runbook: 'docs/operations.md#slo-budget-burn',
      },
    };
  });
}

/** Alerts on causes: each names the metric an operator looks at next. */
export const CAUSE_ALERTS = [
  {
    alert: 'AnimalStoreDependencyFailures',
    expr: `sum by (job, instance, reason) (rate(animal_store_dependency_failures_total{job="${JOB}"}[5m])) > 0.1`,
    for: '5m',
    labels: { severity: 'page' },
    annotations: {
      summary: 'Requests answered 503 because a dependency failed ({{ $labels.reason }})',
      description:
        '{{ $labels.instance }}: {{ $value | humanize }} answers/s are 503 for {{ $labels.reason }} (database or rate-limit store).',
      runbook: 'docs/operations.md#dependency-failures',
    },
  },
  {
    // Capacity, not a fault: the SLO's burn alerts page when the shed share eats the budget; this one says earlier, and
    // per replica, that traffic has outgrown what it can serve (a share of 1 % sustained, not a burst's few seconds).
    alert: 'AnimalStoreLoadShedding',
    expr: `sum by (job, instance) (rate(${SHED}[5m]))\n/\nsum by (job, instance) (${rates([API_ANSWERS, SHED], '5m')})\n> 0.01`,
    for: '10m',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'A replica sheds load: its traffic is more than it can serve',
      description:
        '{{ $labels.instance }} answered {{ $value | humanizePercentage }} of its requests 503 to shed load over 5 minutes (by reason and plan: animal_store_load_shed_total).',
      runbook: 'docs/operations.md#load-shedding',
    },
  },
  {
    alert: 'AnimalStoreRateLimitStoreFallback',
    expr: `sum by (job, instance) (increase(animal_store_rate_limit_store_fallbacks_total{job="${JOB}"}[10m])) > 0`,
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'Redis failed: rate limits are per replica (or refused)',
      description: '{{ $labels.instance }} fell back from Redis {{ $value | humanize }} times in 10 minutes.',
      runbook: 'docs/operations.md#dependency-failures',
    },
  },
  {
    alert: 'AnimalStoreBanSpike',
    expr: `sum by (job) (increase(animal_store_rate_limit_bans_total{job="${JOB}"}[15m])) > 10`,
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'Many temporary bans started: a client loops, or a key is being guessed',
      description: '{{ $value | humanize }} bans started in 15 minutes (by plan: animal_store_rate_limit_bans_total).',
      runbook: 'docs/operations.md#ban-spikes',
    },
  },
  {
    alert: 'AnimalStoreReadinessFlapping',
    expr: `sum by (job, instance) (increase(animal_store_ready_changes_total{job="${JOB}"}[15m])) >= 4`,
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'Readiness flaps: the load balancer keeps taking the replica out and back',
      description: '{{ $labels.instance }}: /readyz changed its answer {{ $value | humanize }} times in 15 minutes.',
      runbook: 'docs/operations.md#readiness-flapping',
    },
  },
  {
    alert: 'AnimalStoreNotReady',
    expr: `max by (job, instance) (animal_store_ready{job="${JOB}"}) == 0`,
    for: '10m',
    labels: { severity: 'ticket' },
    annotations: {
      summary: 'A replica answers /readyz with 503',
      description:
        '{{ $labels.instance }} has not been ready for 10 minutes (database unreachable, or stuck draining).',
      runbook: 'docs/operations.md#readiness-flapping',
    },
  },
  {
    alert: 'AnimalStoreTargetDown',
    expr: `up{job="${JOB}"} == 0`,
    for: '5m',
    labels: { severity: 'page' },
    annotations: {
      summary: 'Prometheus cannot scrape a replica',
      description: '{{ $labels.instance }} has not answered /metrics for 5 minutes.',
      runbook: 'docs/operations.md#target-down',
    },
  },
];

export function ruleGroups() {
  // One group per SLO: rules of a group are evaluated in order, so each alert reads ratios of the same evaluation.
  return [
    ...SLOS.map((slo) => ({
      name: `animal-store-slo-${slo.name}`,
      rules: [...WINDOWS.map((w) => ({ record: ratioName(slo, w), expr: ratioExpr(slo, w) })), ...burnAlert(slo)],
    })),
    { name: 'animal-store-cause-alerts', rules: CAUSE_ALERTS },
  ];
}

function camel(name) {
  return name.replace(/(^|_)([a-z])/g, (_m, _sep, c) => c.toUpperCase());
}

/** YAML for Prometheus: block scalars for expressions, JSON strings (valid YAML) for the rest. */
export function renderRules() {
  const lines = ['# Generated by slo-rules.mjs (node slo-rules.mjs): edit that file, not this one.', 'groups:'];
  for (const group of ruleGroups()) {
    lines.push(`  - name: ${group.name}`, '    rules:');
    for (const rule of group.rules) {
      const [kind, name] = rule.record ? ['record', rule.record] : ['alert', rule.alert];
      lines.push(`      - ${kind}: ${name}`, '        expr: |');
      for (const line of rule.expr.split('\n')) lines.push(`          ${line}`);
      if (rule.for) lines.push(`        for: ${rule.for}`);
      for (const key of ['labels', 'annotations']) {
        if (!rule[key]) continue;
        lines.push(`        ${key}:`);
        for (const [k, v] of Object.entries(rule[key])) lines.push(`          ${k}: ${JSON.stringify(v)}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

export const RULES_FILE = fileURLToPath(new URL('rules.yml', import.meta.url));

// `node slo-rules.mjs` writes rules.yml; `--check` only fails (exit 1) when the committed file differs.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes('--check')) writeFileSync(RULES_FILE, renderRules());
  else if (readFileSync(RULES_FILE, 'utf8') !== renderRules()) {
    console.error(`${RULES_FILE} is not what slo-rules.mjs makes: run node ${process.argv[1]}`);
    process.exit(1);
  }
}
