import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

/**
 * What the services have in common: a state folder per instance, a lock so concurrent test runs of the machine decide
 * one at a time, a file per run using the instance (the last one out stops it), and processes found by pid files whose
 * command line is checked before any signal, so a recycled pid never hits someone else's process.
 */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it answers true, at most `timeoutMs`; then fails naming `what`. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a pid file, if the file exists and that process runs a command line containing `expect`. */
export function pidFrom(file: string, expect: string): number | undefined {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return cmdline.includes(expect) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Sends `signal`, waits up to `timeoutMs` for the process to go, then SIGKILL. */
export async function stopPid(pid: number, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 5_000): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  try {
    await waitFor(`process ${pid} to exit`, () => !isAlive(pid), timeoutMs, 20);
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    await waitFor(`process ${pid} to exit after SIGKILL`, () => !isAlive(pid), 5_000, 20);
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Runs a command; resolves with its stdout, rejects with its stderr. */
export function run(command: string, args: string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')}: ${err.message}\n${stderr}${stdout}`));
      else resolve(stdout);
    });
  });
}

/** Runs `fn` while holding the folder's lock (a `lock` folder; one left by a dead process is taken over). */
export async function withLock<T>(dir: string, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, 'lock');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let owner = Number.NaN;
      try {
        owner = Number.parseInt(readFileSync(join(lock, 'pid'), 'utf8'), 10);
      } catch {
        // being written, or left empty by a process that died between the two calls
      }
      const orphaned =
        Number.isNaN(owner) && Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 10_000;
      if ((Number.isSafeInteger(owner) && !isAlive(owner)) || orphaned) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline)
        throw new Error(`lock ${lock} held by process ${owner} for over ${timeoutMs} ms`, { cause: err });
      else await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The runs (live processes) registered as users of the instance in `dir`; files of dead processes are removed. */
export function liveUsers(dir: string): string[] {
  const users = join(dir, 'users');
  mkdirSync(users, { recursive: true });
  return readdirSync(users).filter((name) => {
    const pid = Number.parseInt(name, 10);
    if (Number.isSafeInteger(pid) && isAlive(pid)) return true;
    rmSync(join(users, name), { force: true });
    return false;
  });
}

/** Registers this process as a user of the instance in `dir`; returns the registration's name. */
export function addUser(dir: string): string {
  const name = `${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(join(dir, 'users'), { recursive: true });
  writeFileSync(join(dir, 'users', name), '');
  return name;
}

export function removeUser(dir: string, name: string): void {
  rmSync(join(dir, 'users', name), { force: true });
}

/**
 * A service instance shared by the test runs of the machine: `start` runs under the lock when the instance is not
 * healthy (it must clean up what a crashed run left), `stop` when the last live user releases it.
 */
export async function shared<T>(
  dir: string,
  instance: {
    healthy(): Promise<boolean>;
    start(): Promise<void>;
    stop(): Promise<void>;
    handle(release: () => Promise<void>): T;
  },
): Promise<T> {
  const name = await withLock(dir, async () => {
    if (!(await instance.healthy())) {
      try {
        await instance.start();
      } catch (err) {
        await instance.stop();
        throw err;
      }
    }
    return addUser(dir);
  });
  let released = false;
  return instance.handle(async () => {
    if (released) return;
    released = true;
    await withLock(dir, async () => {
      removeUser(dir, name);
      if (liveUsers(dir).length === 0) await instance.stop();
    });
  });
}

/**
 * A service instance one run owns alone (a test that kills parts of it): waits until no other live run uses the
 * instance in `dir`, then starts it afresh (after stopping what a crashed run left); `release` stops it.
 */
export async function exclusive<T>(
  dir: string,
  instance: { start(): Promise<void>; stop(): Promise<void>; handle(release: () => Promise<void>): T },
  timeoutMs = 300_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let name: string | undefined;
  while (name === undefined) {
    name = await withLock(dir, async () => {
      if (liveUsers(dir).length > 0) return undefined;
      await instance.stop();
      const user = addUser(dir);
      try {
        await instance.start();
      } catch (err) {
        await instance.stop();
        removeUser(dir, user);
        throw err;
      }
      return user;
    });
    if (name === undefined) {
      if (Date.now() > deadline) throw new Error(`${dir} still in use by another run after ${timeoutMs} ms`);
      await sleep(500);
    }
  }
  const user = name;
  let released = false;
  return instance.handle(async () => {
    if (released) return;
    released = true;
    await withLock(dir, async () => {
      await instance.stop();
      removeUser(dir, user);
    });
  });
}
