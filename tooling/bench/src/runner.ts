/**
 * Runs the chosen scenarios in the registry's order, then prints the report (each scenario's part, then every
 * target's verdict) and writes it to results/latest.md and results/latest.json.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { RESULTS, SERVER_DIST, SERVER_MAIN } from './paths.js';
import type { Run } from './run.js';
import type { Scenario, ScenarioResult } from './scenario.js';
import { SCENARIOS } from './scenarios/index.js';
import { settings } from './settings.js';

/** The scenarios BENCH_ONLY names, in the registry's order; when it is unset, all but the opt-in ones. */
export function chosen(names: readonly string[] | undefined): Scenario[] {
  if (!names) return SCENARIOS.filter((s) => !s.optIn);
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0)
    throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  return SCENARIOS.filter((s) => names.includes(s.name));
}

function header(startedAt: Date): Record<string, unknown> {
  const machine = {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
  const { seconds, rounds, connections, logLevel } = settings;
  console.log(`animal-store bench  ${startedAt.toISOString()}`);
  console.log(`machine: ${machine.nproc} cpus, ${machine.cpu}, ${machine.memoryGiB} GiB, node ${machine.node}`);
  if (process.env['BENCH_SERVER_DIST']) console.log(`server under test: ${SERVER_DIST}`);
  console.log(
    `closed runs: ${connections} keep-alive connections, ${seconds} s per run, ${rounds} alternating rounds, medians; servers LOG_LEVEL=${logLevel}\n`,
  );
  return {
    startedAt: startedAt.toISOString(),
    machine,
    settings: { SECONDS: seconds, ROUNDS: rounds, CONNECTIONS: connections, LOG_LEVEL: logLevel },
    serverDist: SERVER_DIST,
  };
}

function writeReport(startedAt: Date, json: Record<string, unknown>, results: ScenarioResult[]): void {
  const lines: string[] = [];
  const out = (s = '') => {
    console.log(s);
    lines.push(s);
  };
  out('\n== Results (medians of alternating rounds) ==\n');
  for (const r of results) r.print(out);
  const targets = results.flatMap((r) => r.targets ?? []);
  if (targets.length > 0) {
    out('\nTargets:');
    for (const t of targets) out(`- ${t}`);
  }
  const sections: Record<string, unknown> = {};
  for (const r of results) Object.assign(sections, r.json);
  const report = { ...json, ...sections, targets, finishedAt: new Date().toISOString() };
  writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(RESULTS, 'latest.md'), `${lines.join('\n')}\n`);
  const files = results.flatMap((r) => r.files ?? []).map((f) => `, ${f.slice(RESULTS.length + 1)}`);
  console.log(
    `\nwritten: ${join(RESULTS, 'latest.json')}, latest.md${files.join('')}  (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s)`,
  );
}

/** Runs `scenarios` in `run`; the caller cleans the run up. */
export async function runSuite(run: Run, scenarios: Scenario[]): Promise<void> {
  if (!existsSync(SERVER_MAIN))
    throw new Error(`${SERVER_MAIN} missing: run \`pnpm build\` (or \`pnpm bench\`, which builds first)`);
  mkdirSync(RESULTS, { recursive: true });
  const startedAt = new Date();
  const json = header(startedAt);
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    if (scenario.alone) await run.clearForAlone();
    results.push(await scenario.run(run));
  }
  writeReport(startedAt, json, results);
}
