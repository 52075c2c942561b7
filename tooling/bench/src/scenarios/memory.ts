/**
 * Memory: the RSS of the SQLite server over BENCH_MEMORY_SECONDS (60) of closed-loop load cycling list, list, get,
 * create, sampled every 5 s; growth is judged from the first sample under load, not from the idle server.
 */
import { useFleet } from '../fleet.js';
import { load } from '../load-client.js';
import { create, get, list } from '../requests.js';
import type { Scenario } from '../scenario.js';
import { rssBytes } from '../servers.js';
import { settings } from '../settings.js';
import { fmtInt } from '../stats.js';

const SAMPLE_EVERY_MS = 5000;

export const memory: Scenario = {
  name: 'memory',
  description: `RSS of the SQLite server under steady load, sampled every ${SAMPLE_EVERY_MS / 1000} s`,
  async run(ctx) {
    const { sqlite, sqliteServer } = await useFleet(ctx);
    const seconds = settings.memorySeconds;
    console.log(
      `\nmemory: RSS of the SQLite server over ${seconds} s of closed-loop load (list, list, get, create in turn), sampled every 5 s:`,
    );
    const samples: Array<{ t: number; rssMiB: number }> = [];
    const started = Date.now();
    const sample = () =>
      samples.push({ t: Math.round((Date.now() - started) / 1000), rssMiB: rssBytes(sqliteServer.pid) / 2 ** 20 });
    sample();
    const timer = setInterval(sample, SAMPLE_EVERY_MS);
    const res = await load({
      mode: 'closed',
      origin: sqliteServer.origin,
      requests: [list(sqlite.key), list(sqlite.key), get(sqlite.key), create(sqlite.key)],
      connections: settings.connections,
      durationSec: seconds,
    });
    clearInterval(timer);
    sample();
    // samples[0] is the idle server just before the load.
    const rss = samples.slice(1).map((s) => s.rssMiB);
    console.log(`  ${samples.map((s) => `${s.t}s:${s.rssMiB.toFixed(0)}`).join('  ')} MiB`);
    console.log(`  ${fmtInt(res.rps)} req/s, non-2xx ${res.non2xx}`);
    const mem = {
      samples,
      idle: samples[0]!.rssMiB,
      rps: res.rps,
      non2xx: res.non2xx,
      first: rss[0]!,
      last: rss[rss.length - 1]!,
      max: Math.max(...rss),
    };
    return {
      json: { memory: mem },
      print(out) {
        out(
          `\nMemory: server RSS over ${seconds} s of steady load (${fmtInt(mem.rps)} req/s), idle before: ${mem.idle.toFixed(1)} MiB:`,
        );
        out(
          `first under load ${mem.first.toFixed(1)} MiB, last ${mem.last.toFixed(1)} MiB, max ${mem.max.toFixed(1)} MiB, growth ${(mem.last - mem.first).toFixed(1)} MiB (${(((mem.last - mem.first) / mem.first) * 100).toFixed(1)} %)`,
        );
        out(`samples: ${mem.samples.map((s) => `${s.t}s ${s.rssMiB.toFixed(0)}`).join(', ')}`);
      },
    };
  },
};
