/** Server processes of a run: started on a free port of 127.0.0.1, stopped at the end (or on Ctrl-C). */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@animal-store/test-services';
import { REPO_ROOT } from './paths.js';

export interface RunningServer {
  name: string;
  origin: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

const running = new Set<RunningServer>();

/**
 * The Dockerfile's runtime stage, without its comment lines, as Docker leaves them out (inside a continued instruction
 * too): a comment that names a setting does not set it.
 */
function runtimeStage(dockerfile: string): string {
  const start = dockerfile.search(/^FROM .* AS runtime$/m);
  if (start < 0) throw new Error('the Dockerfile has no runtime stage');
  return dockerfile
    .slice(start)
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n');
}

/** The NODE_OPTIONS of the Dockerfile's runtime stage (`ENV ... NODE_OPTIONS=...`); throws when it sets none. */
export function imageNodeOptions(dockerfile: string): string {
  const value = /\bNODE_OPTIONS=("[^"]*"|\S+)/.exec(runtimeStage(dockerfile))?.[1];
  if (value === undefined) throw new Error("the Dockerfile's runtime stage sets no NODE_OPTIONS");
  return value.replace(/^"(.*)"$/, '$1');
}

/**
 * The flags the runtime stage's CMD gives node before the script (`CMD ["node", "--flag", "dist/main.js"]`: the V8
 * flags NODE_OPTIONS may not carry); throws unless the CMD is in exec form and runs node.
 */
export function imageNodeFlags(dockerfile: string): string[] {
  const cmd = /^CMD (\[.*\])\s*$/m.exec(runtimeStage(dockerfile))?.[1];
  const words: unknown = cmd === undefined ? undefined : JSON.parse(cmd);
  if (!Array.isArray(words) || words[0] !== 'node' || words.length < 2 || !words.every((w) => typeof w === 'string'))
    throw new Error(`the Dockerfile's runtime stage has no CMD running node in exec form (${cmd ?? 'none'})`);
  return words.slice(1, -1);
}

const DOCKERFILE = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');

/**
 * Every server of a run, the baselines too, starts as the image runs the service: with its NODE_OPTIONS (V8's young
 * generation) and its CMD's node flags (no memory reducer). The bench measures what production runs, and compares like
 * with like.
 */
const NODE_OPTIONS = imageNodeOptions(DOCKERFILE);
const NODE_FLAGS = imageNodeFlags(DOCKERFILE);

/** Starts `node [the image's flags] [nodeArgs] script` with PORT/HOST set and waits until GET /healthz answers 200. */
export async function startServer(
  name: string,
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [...NODE_FLAGS, ...nodeArgs, script], {
    env: { ...process.env, NODE_OPTIONS, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const server: RunningServer = {
    name,
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid ?? 0,
    child,
    async stop() {
      running.delete(server);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  running.add(server);
  await untilHealthy(server, () => stderr);
  return server;
}

async function untilHealthy(server: RunningServer, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (server.child.exitCode !== null)
      throw new Error(`${server.name} exited (${server.child.exitCode}) before answering:\n${stderr()}`);
    try {
      const res = await fetch(`${server.origin}/healthz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`${server.name} did not answer /healthz within 30 s:\n${stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops every server still running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
}

const CLOCK_TICKS = 100;

/** A /proc stat line's thread name and CPU time (user + system, ms); the name may hold spaces and parentheses. */
export function taskStat(line: string): { name: string; ms: number } {
  const close = line.lastIndexOf(')');
  const fields = line.slice(close + 2).split(' ');
  return {
    name: line.slice(line.indexOf('(') + 1, close),
    ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS,
  };
}

/**
 * CPU time (user + system, ms) a process has used so far, from /proc/<pid>/stat; with `tid`, one of its threads' (the
 * main thread's tid is the pid).
 */
export function cpuMs(pid: number, tid?: number): number {
  const stat = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  return taskStat(readFileSync(stat, 'utf8')).ms;
}

/**
 * How many times a process's main thread has gone to sleep and been woken so far (its voluntary context switches, from
 * /proc/<pid>/task/<pid>/status): an idle event loop wakes once for each timer that falls due.
 */
export function mainThreadWakeups(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  const value = /^voluntary_ctxt_switches:\s*(\d+)$/m.exec(status)?.[1];
  if (value === undefined) throw new Error(`no voluntary_ctxt_switches in /proc/${pid}/task/${pid}/status`);
  return Number(value);
}

/** A server's CPU time (ms) by the threads it runs on: the four add up to the process's but for threads that ended. */
export interface ThreadCpu {
  /** The main thread: the server's JavaScript, and the collector's pauses. */
  main: number;
  /** V8's helper threads (`node-V8Worker`): the collector's concurrent marking and sweeping, background compiling. */
  v8: number;
  /** Worker threads (`WorkerThread`), such as the OTLP export worker. */
  workers: number;
  /** The rest: libuv's pool, Node's other threads. */
  other: number;
}

const THREAD_GROUPS = ['main', 'v8', 'workers', 'other'] as const;

/** A ThreadCpu whose every group is `of(group)`. */
export const byThread = (of: (group: keyof ThreadCpu) => number): ThreadCpu =>
  Object.fromEntries(THREAD_GROUPS.map((group) => [group, of(group)])) as unknown as ThreadCpu;

/**
 * A server's CPU time so far by thread, from /proc/<pid>/task: its threads told apart by the names Node 24 and later
 * give them (on older releases, every thread but the main one counts as `other`).
 */
export function threadCpuMs(pid: number): ThreadCpu {
  const out = byThread(() => 0);
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let thread: { name: string; ms: number };
    try {
      thread = taskStat(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
    } catch {
      continue; // it ended since the listing
    }
    const group =
      Number(tid) === pid
        ? 'main'
        : thread.name.startsWith('node-V8Worker')
          ? 'v8'
          : thread.name === 'WorkerThread'
            ? 'workers'
            : 'other';
    out[group] += thread.ms;
  }
  return out;
}

/** Resident set size of a process (bytes), from /proc. */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : NaN;
}
