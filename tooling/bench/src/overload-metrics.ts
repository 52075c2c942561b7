/**
 * What the overload scenario reads of a server under load: its metrics on OPS_PORT (the shedder's level and signal,
 * what it shed, its major collections) and its CPU from /proc, the whole process's and its main thread's.
 */
import { cpuMs } from './servers.js';

/** A server of the scenario as far as reading it goes: its OPS_PORT origin and its name (overload-steps.ts). */
interface Watched {
  readonly opsOrigin: string;
  readonly server: { readonly name: string };
}

export interface Collections {
  major: number;
  /** Their pauses' total (ms), as node reports them: the collector's own pause, not the time other threads took. */
  pauseMs: number;
}

/** Counters read in one scrape: animal_store_load_shed_total summed by reason, and the major collections. */
export interface Counters {
  shed: Record<string, number>;
  collections: Collections;
}

const scrape = async (s: Watched) => (await fetch(`${s.opsOrigin}/metrics`)).text();

/**
 * The server's counters so far (OPS_PORT's /metrics): the answers shed by reason, and prom-client's
 * `nodejs_gc_duration_seconds{kind="major"}`. Read before a step's load starts and after it ends, so the scrapes hold no
 * measured request.
 */
export async function counters(s: Watched): Promise<Counters> {
  const text = await scrape(s);
  const shed: Record<string, number> = {};
  for (const m of text.matchAll(/^animal_store_load_shed_total\{reason="([a-z_]+)"[^}]*\} (\d+)$/gm))
    shed[m[1]!] = (shed[m[1]!] ?? 0) + Number(m[2]);
  const gc = (series: string) =>
    Number(new RegExp(`^nodejs_gc_duration_seconds_${series}\\{kind="major"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { shed, collections: { major: gc('count'), pauseMs: gc('sum') * 1000 } };
}

/** What the counters grew by from `before` to `after`. */
export function since(after: Counters, before: Counters): { shedBy: Record<string, number>; collections: Collections } {
  return {
    shedBy: Object.fromEntries(Object.entries(after.shed).map(([k, v]) => [k, v - (before.shed[k] ?? 0)])),
    collections: {
      major: after.collections.major - before.collections.major,
      pauseMs: after.collections.pauseMs - before.collections.pauseMs,
    },
  };
}

/**
 * Starts measuring a server's CPU; the function returned tells its share of one core since then, the whole process's
 * and its main thread's (the rest is its other threads': V8's compilers and concurrent collector above all, which on
 * the server's one CPU take their time from the event loop).
 */
export function cpuShares(pid: number): () => { serverCpu: number; mainThreadCpu: number } {
  const [all, main, started] = [cpuMs(pid), cpuMs(pid, pid), Date.now()];
  return () => {
    const elapsed = Date.now() - started;
    return { serverCpu: (cpuMs(pid) - all) / elapsed, mainThreadCpu: (cpuMs(pid, pid) - main) / elapsed };
  };
}

/**
 * The shed level and event-loop delay gauges (OPS_PORT's /metrics), read once, `afterMs` into the step, on either
 * server. A scrape holds the server's event loop for several milliseconds (the exposition is built on the main thread,
 * also for OPS_PORT) and lengthens the tail of the requests in flight meanwhile (of those never shed above all:
 * `/healthz` and the Enterprise trickle). So each server is scraped once while a step's load runs, shedding on or off
 * alike: about as often as a Prometheus scrapes a replica (every 15 s by default), not more often on the server under
 * judgement.
 */
export async function watchShedder(s: Watched, afterMs: number): Promise<{ level: number; delayMs: number }> {
  await new Promise((r) => setTimeout(r, afterMs));
  const text = await scrape(s);
  return {
    level: Number(/^animal_store_load_shed_level (\S+)$/m.exec(text)?.[1] ?? NaN),
    delayMs:
      1000 * Number(/^animal_store_load_shed_signal\{signal="event_loop_delay"\} (\S+)$/m.exec(text)?.[1] ?? NaN),
  };
}

/**
 * Waits until the shedder is back at level 0 (read from /metrics on OPS_PORT), so a step does not start in the
 * previous one's overload: the level falls slowly by design (hysteresis). Gives up after 30 s.
 */
export async function settle(s: Watched): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (/^animal_store_load_shed_level 0$/m.test(await scrape(s))) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  console.log(`  (!) ${s.server.name}: the shed level did not fall to 0 within 30 s`);
}
