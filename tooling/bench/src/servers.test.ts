import { readdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { expect, it } from 'vitest';
import { cpuMs, imageNodeFlags, imageNodeOptions, mainThreadWakeups, taskStat, threadCpuMs } from './servers.js';

it('reads the name and CPU time of a stat line whose name holds spaces and parentheses', () => {
  // pid (name) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const line = '4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0';
  expect(taskStat(line)).toEqual({ name: 'a) b (c', ms: 3000 });
});

it("reads the NODE_OPTIONS of the Dockerfile's runtime stage, not of an earlier one", () => {
  const stages = (runtimeEnv: string) =>
    `FROM node AS build\nENV NODE_OPTIONS=--build-only\nFROM node AS runtime\nENV NODE_ENV=production \\\n${runtimeEnv}`;
  expect(imageNodeOptions(stages('    NODE_OPTIONS=--max-semi-space-size=64 \\\n    PORT=3000\n'))).toBe(
    '--max-semi-space-size=64',
  );
  expect(imageNodeOptions(stages('    NODE_OPTIONS="--a --b"\n'))).toBe('--a --b');
  expect(() => imageNodeOptions(stages('    PORT=3000\n'))).toThrow(/sets no NODE_OPTIONS/);
  // A comment, on its own or inside the continued ENV, sets nothing.
  const commented = `FROM node AS runtime\n# NODE_OPTIONS=--from-a-comment\nENV NODE_ENV=production \\\n`;
  expect(imageNodeOptions(`${commented}    # NODE_OPTIONS=--also-a-comment\n    NODE_OPTIONS=--set\n`)).toBe('--set');
  expect(() => imageNodeOptions(`${commented}    PORT=3000\n`)).toThrow(/sets no NODE_OPTIONS/);
});

it("reads the node flags of the runtime stage's CMD, not the HEALTHCHECK's nor a comment's", () => {
  const runtime = (cmd: string) =>
    `FROM node AS build\nCMD ["node", "--build-only", "x.js"]\nFROM node AS runtime\n` +
    `HEALTHCHECK CMD ["node", "-e", "probe()"]\n# CMD ["node", "--from-a-comment", "dist/main.js"]\n${cmd}\n`;
  expect(imageNodeFlags(runtime('CMD ["node", "--no-memory-reducer", "dist/main.js"]'))).toEqual([
    '--no-memory-reducer',
  ]);
  expect(imageNodeFlags(runtime('CMD ["node", "--a", "--b=1", "dist/main.js"]'))).toEqual(['--a', '--b=1']);
  expect(imageNodeFlags(runtime('CMD ["node", "dist/main.js"]'))).toEqual([]);
  // Shell form, another program, or none: the flags cannot be known, so the bench does not guess them.
  expect(() => imageNodeFlags(runtime('CMD node dist/main.js'))).toThrow(/no CMD running node in exec form/);
  expect(() => imageNodeFlags(runtime('CMD ["sh", "-c", "node dist/main.js"]'))).toThrow(/no CMD running node/);
  expect(() => imageNodeFlags(runtime(''))).toThrow(/no CMD running node in exec form \(none\)/);
});

// Node names its threads from release 24 on; before, every thread but the main one counts as `other`.
const named = Number(process.versions.node.split('.')[0]) >= 24;

it("splits a process's CPU by thread: a busy worker thread's time under workers, the split's sum the whole's", async () => {
  const sumOf = (t: ReturnType<typeof threadCpuMs>) => t.main + t.v8 + t.workers + t.other;
  const [allBefore, before] = [cpuMs(process.pid), threadCpuMs(process.pid)];
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const end = Date.now() + 300;
     while (Date.now() < end);
     parentPort.postMessage('spun');
     setInterval(() => {}, 1000);`,
    { eval: true },
  );
  try {
    await new Promise((resolve) => worker.once('message', resolve));
    const [after, allAfter] = [threadCpuMs(process.pid), cpuMs(process.pid)];
    // Each thread's time and the process's are rounded to 10 ms ticks apart: a tick a thread either way.
    const threads = readdirSync(`/proc/${process.pid}/task`).length;
    const spent = sumOf(after) - sumOf(before);
    expect(Math.abs(spent - (allAfter - allBefore))).toBeLessThanOrEqual(10 * threads);
    const workers = after.workers - before.workers;
    if (named) expect(workers).toBeGreaterThanOrEqual(250);
    else expect(workers).toBe(0);
    expect(after.main).toBeGreaterThan(0);
  } finally {
    await worker.terminate();
  }
});

it('counts the main thread waking: once for each timer an idle loop waits for', async () => {
  const before = mainThreadWakeups(process.pid);
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(mainThreadWakeups(process.pid) - before).toBeGreaterThanOrEqual(5);
});
