/**
 * The suite's knobs, read once from the environment; every one is optional. Servers, databases and services are on
 * 127.0.0.1 only.
 */
const number = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return value;
};

/** A positive number, or undefined when unset. */
const optionalNumber = (name: string): number | undefined =>
  process.env[name] === undefined || process.env[name] === '' ? undefined : number(name, 1);

const list = (name: string): string[] | undefined =>
  process.env[name]
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

const local = (name: string, fallback: string): string => {
  const url = process.env[name] ?? fallback;
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost') throw new Error(`the bench targets 127.0.0.1 only, not ${url}`);
  return url;
};

export const settings = {
  /** BENCH_SECONDS: length of one closed-loop run. */
  seconds: number('BENCH_SECONDS', 5),
  /** BENCH_ROUNDS: alternating rounds (the order of the targets reversed every other round); medians are reported. */
  rounds: number('BENCH_ROUNDS', 3),
  /** BENCH_CONNECTIONS: keep-alive connections of a closed-loop run. */
  connections: number('BENCH_CONNECTIONS', 50),
  /** BENCH_LOG_LEVEL: LOG_LEVEL of the servers under test. */
  logLevel: process.env['BENCH_LOG_LEVEL'] ?? 'warn',
  /** BENCH_ONLY: the scenarios to run (comma list of names, `--list` shows them); all when unset. */
  only: list('BENCH_ONLY'),
  /** BENCH_MIXED: only these mixed targets (e.g. `sqlite-0,postgres-10`), with both floors. */
  mixedOnly: list('BENCH_MIXED'),
  /**
   * BENCH_TRACING_SECONDS and BENCH_TRACING_ROUNDS: the tracing scenario's runs (6 workloads, each one's four variants
   * side by side on one CPU, fresh servers each round). A round's fresh processes are one measurement of each variant's
   * cost, and one process can sit a few per cent above another of the same code all its life: the rounds are what
   * narrows the confidence interval the targets are judged on, so there are enough of them for a 5 % target, and a
   * multiple of the four places a round's variants turn through, so that each variant sits in each equally often. A
   * window is long enough to hold several of the collector's mark-compacts: one landing in a short window or not moves
   * that window's CPU far more than the costs measured, and a window's variants each pay their share of them only over
   * a long one (BENCHMARKS.md).
   */
  tracingSeconds: number('BENCH_TRACING_SECONDS', 30),
  tracingRounds: number('BENCH_TRACING_ROUNDS', 8),
  /**
   * BENCH_TRACING_WARMUP_SECONDS: each workload's unmeasured load (its four servers at once) right before it is
   * measured, so every variant meets it with its caches filled for it, as a server that has run a while would.
   */
  tracingWarmupSeconds: number('BENCH_TRACING_WARMUP_SECONDS', 5),
  /**
   * BENCH_TRACING_SETTLE_SECONDS: each round's fresh servers of a provider take its 10 % creates workload (the four at
   * once) this long before any of its workloads is measured, so that V8 has compiled their hot code: side by side each
   * server has a quarter of a CPU, and a few seconds of load leave it mid-compilation (BENCHMARKS.md).
   */
  tracingSettleSeconds: number('BENCH_TRACING_SETTLE_SECONDS', 60),
  /**
   * BENCH_TRACING_RATE: the rate (req/s) at which the tracing scenario loads each server, in an open loop: the CPU it
   * takes to serve the same traffic, below saturation as a replica runs. The rate must leave the four servers of a
   * workload (with the other provider's four idle beside them) below three quarters of one CPU of the machine: near
   * saturation, queues make each window's batching, hence its CPU per answer, a matter of chance; together() flags a
   * window whose server fell behind its rate, and a run past that share is not judged (tracing-cost.ts MAX_BUSY).
   * `closed` loads each with a closed loop of BENCH_CONNECTIONS instead, saturating the CPU they share: each server's
   * CPU per answer then moves with its share of it (past MAX_BUSY, not judged).
   */
  tracingRate: process.env['BENCH_TRACING_RATE'] === 'closed' ? undefined : number('BENCH_TRACING_RATE', 200),
  /**
   * BENCH_TRACING_VARIANTS: the tracing variants measured against the baseline (a comma list of off, 10, 100; all when
   * unset). Each is a server beside the baseline's on CPU 0: fewer of them keep a slower machine below MAX_BUSY.
   */
  tracingVariants: list('BENCH_TRACING_VARIANTS'),
  /** BENCH_MEMORY_SECONDS: length of the memory scenario's load. */
  memorySeconds: number('BENCH_MEMORY_SECONDS', 60),
  /** BENCH_OVERLOAD_STEP_SECONDS: length of each offered-load step of the overload scenario (11 per setup). */
  overloadStepSeconds: number('BENCH_OVERLOAD_STEP_SECONDS', 8),
  /**
   * BENCH_OVERLOAD_KEYS: Free keys sending the overload scenario's traffic (60 requests a minute each at most; keep it
   * under the server's key cache, 10,000 keys, or most requests pay a key lookup).
   */
  overloadKeys: number('BENCH_OVERLOAD_KEYS', 9500),
  /**
   * BENCH_OVERLOAD_CAPACITY: the capacity (req/s) the steps are offered in multiples of, instead of the one searched
   * for in the run. The search moves by a quarter between runs on one machine, and every step's rate with it: a fixed
   * rate lets two builds of the controller be compared step for step. The report says the capacity was given.
   */
  overloadCapacity: optionalNumber('BENCH_OVERLOAD_CAPACITY'),
  /** BENCH_OVERLOAD_ONLY: while iterating, a subset: setups (sqlite, postgres), steps (0.5, 1, 2, 4, noisy), on/off. */
  overloadOnly: list('BENCH_OVERLOAD_ONLY'),
  /** BENCH_PROFILE_SECONDS and BENCH_PROFILE_TOP: `--profile`'s load and the functions it prints. */
  profileSeconds: number('BENCH_PROFILE_SECONDS', 10),
  profileTop: number('BENCH_PROFILE_TOP', 30),
  /** BENCH_PG_URL: the PostgreSQL server bench databases are created on (and dropped from). */
  pgAdminUrl: local('BENCH_PG_URL', 'postgresql://postgres@127.0.0.1:5432/postgres'),
  /** BENCH_REDIS_URL: the Redis of the Redis-limited servers and of the limiter bench. */
  redisUrl: local('BENCH_REDIS_URL', 'redis://127.0.0.1:6379'),
} as const;

export type Settings = typeof settings;
