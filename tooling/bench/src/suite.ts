/**
 * The HTTP benchmark suite of the BUILT server (apps/server/dist), against baselines measured in the same run: the
 * workspace's Express answering the same bytes (the framework floor) and bare node:http (the ceiling).
 *
 *   pnpm bench                                    (root: builds, then runs every scenario)
 *   node tooling/bench/dist/suite.js              (after a build; BENCH_ONLY=throughput,mixed picks scenarios)
 *   node tooling/bench/dist/suite.js --list       (the scenarios, in the order they run)
 *   node tooling/bench/dist/suite.js --profile sqlite list     (CPU profile of a server under load, see profile.ts)
 *   node tooling/bench/dist/suite.js --top <file.cpuprofile>…  (the same summary of profiles taken before)
 *
 * Knobs: settings.ts (BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS, BENCH_ONLY, …); BENCH_SERVER_DIST measures
 * another build of the server (paths.ts). Targets 127.0.0.1 only; every run is bounded in time; every process and
 * database it makes is removed at the end, also on Ctrl-C.
 */
import { printTop } from './cpuprofile-top.js';
import { profile } from './profile.js';
import { Run } from './run.js';
import { chosen, runSuite } from './runner.js';
import { SCENARIOS } from './scenarios/index.js';
import { settings } from './settings.js';

const run = new Run();

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === '--list') {
    for (const s of SCENARIOS) console.log(`${s.name.padEnd(12)} ${s.description}${s.optIn ? ' (opt-in)' : ''}`);
  } else if (command === '--top') {
    for (const file of args) printTop(file, 30);
  } else if (command === '--profile') {
    await profile(run, args[0] ?? 'sqlite', args[1] ?? 'list');
  } else if (command === undefined) {
    await runSuite(run, chosen(settings.only));
  } else {
    throw new Error(`unknown argument ${command}: --list, --profile <server> [operation], --top <files>`);
  }
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`\n${signal}: stopping servers, dropping bench databases`);
    void run.cleanup().finally(() => process.exit(130));
  });
}

main(process.argv.slice(2))
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => run.cleanup());
