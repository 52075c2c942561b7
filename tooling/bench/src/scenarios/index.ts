/**
 * The scenarios of `pnpm bench`, in the order they run (BENCH_ONLY picks some; `--list` prints them). Throughput,
 * latency and memory share the servers of fleet.ts; a scenario marked `alone` starts after every server before it
 * stopped. To add one: a module in this folder exporting a `Scenario`, and its line here.
 */
import type { Scenario } from '../scenario.js';
import { compare } from './compare.js';
import { concurrency } from './concurrency.js';
import { crash } from './crash.js';
import { growth } from './growth.js';
import { latency } from './latency.js';
import { memory } from './memory.js';
import { mixed } from './mixed.js';
import { otlp } from './otlp.js';
import { overload } from './overload.js';
import { parse } from './parse.js';
import { ratelimit } from './ratelimit.js';
import { throughput } from './throughput.js';
import { tracing } from './tracing.js';

export const SCENARIOS: readonly Scenario[] = [
  throughput,
  latency,
  memory,
  growth,
  mixed,
  crash,
  ratelimit,
  concurrency,
  otlp,
  parse,
  tracing,
  overload,
  compare,
];
