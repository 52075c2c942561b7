/**
 * The pieces of the mixed workloads (what users send, mix.ts), for every scenario that measures them: the databases
 * with their keys, the floors, the targets, and the ratio per server CPU-second against a floor of the same rounds.
 */
import { baselineServer, PLAIN_FLOOR } from './bench-servers.js';
import { moreKeys } from './more-keys.js';
import { postgresDatabase, sqliteDatabase, type BenchDatabase } from './databases.js';
import type { MixSpec } from './load-spec.js';
import { CANNED } from './requests.js';
import { CATALOGUE_SIZE } from './page.js';
import type { Target } from './rounds.js';
import type { RunContext } from './scenario.js';
import type { RunningServer } from './servers.js';

/** Keys the mixed workloads spread their requests over. */
export const MIXED_KEYS = 40;
/** Shares of creates measured: none, some, only creates. */
export const SHARES = [0, 10, 100] as const;
export type Provider = 'sqlite' | 'postgres';
export const PROVIDER_LABEL: Record<Provider, string> = { sqlite: 'SQLite+memory', postgres: 'Postgres+Redis' };

export interface MixedDatabase {
  db: BenchDatabase;
  /** The CLI's key and MIXED_KEYS - 1 copies of it. */
  keys: string[];
}

/** A seeded database of the provider with MIXED_KEYS keys, dropped at the end of the run (migrated by `serverDist`). */
export async function mixedDatabase(ctx: RunContext, provider: Provider, serverDist?: string): Promise<MixedDatabase> {
  const db = ctx.track(await (provider === 'sqlite' ? sqliteDatabase : postgresDatabase)(CATALOGUE_SIZE, serverDist));
  return { db, keys: [db.key, ...(await moreKeys(db.url, MIXED_KEYS - 1))] };
}

/** Varied pages (a random status or none, limit 10-100, a random cursor half the time) and `share` % creates. */
export const varied = (keys: string[], share: number): MixSpec => ({
  keys,
  createPercent: share,
  maxId: CATALOGUE_SIZE,
});

/** The floor on the service's server construction and on plain app.listen, as targets named `floor`, `floor-plain`. */
export async function floorTargets(prefix: string): Promise<Target[]> {
  const floor = await baselineServer(`${prefix}-floor`, 'floor');
  const plain = await baselineServer(`${prefix}-floor-plain`, 'floor', PLAIN_FLOOR);
  return [
    { name: 'floor', label: 'floor: Express canned page', kind: 'baseline', server: floor, requests: [CANNED] },
    { name: 'floor-plain', label: 'floor on plain app.listen', kind: 'baseline', server: plain, requests: [CANNED] },
  ];
}

/** A target sending the mix to `server`; its label names the provider. */
export const mixTarget = (
  name: string,
  provider: Provider,
  label: string,
  server: RunningServer,
  mix: MixSpec,
): Target => ({
  name,
  label: `${PROVIDER_LABEL[provider]} ${label}`,
  kind: provider,
  server,
  requests: [CANNED],
  mix,
});

/** Varied pages with each share of creates, as targets named `<provider>-<share>` (e.g. `sqlite-10`). */
export const variedTargets = (provider: Provider, server: RunningServer, keys: string[]): Target[] =>
  SHARES.map((share) =>
    mixTarget(`${provider}-${share}`, provider, `varied pages, ${share} % creates`, server, varied(keys, share)),
  );
