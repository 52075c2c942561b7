import { isPlan, SCOPES, type Scope } from '@animal-store/contract';
import type { ApiKeyRecord, ApiKeyStore, ApiKeyUpdate, NewApiKeyRow } from '../types.js';

type KeyRow = Omit<ApiKeyRecord, 'plan' | 'scopes'> & { plan: string; scopes: string };
type KeyWhere = {
  id?: number | { gt?: number; in?: number[]; not?: number };
  hash?: string;
  revokedAt?: null;
  rotatedAt?: null | { not: null };
  expiresAt?: { gt: Date };
  OR?: Array<{
    id?: number;
    lineageId?: number;
    expiresAt?: null | { gt: Date };
    lastUsedAt?: null | { lt: Date };
    lastDeprecatedCallAt?: null | { lt: Date };
  }>;
  AND?: KeyWhere[];
};

/** The calls this store makes on the `ApiKey` model: both providers' generated clients have them (checked, not cast). */
interface ApiKeyModel {
  findUnique(args: { where: { id: number } | { hash: string } }): PromiseLike<KeyRow | null>;
  findMany(args: { orderBy: { id: 'asc' }; where?: KeyWhere; take?: number }): PromiseLike<KeyRow[]>;
  create(args: {
    data: Omit<KeyRow, 'id' | 'createdAt' | 'revokedAt' | 'lastUsedAt' | 'lastDeprecatedCallAt' | 'rotatedAt'>;
  }): PromiseLike<KeyRow>;
  updateMany(args: {
    where: KeyWhere;
    data: Partial<Omit<KeyRow, 'scopes'>> & { scopes?: string | undefined };
  }): PromiseLike<{ count: number }>;
}

/** What the key store needs of a Prisma client (either provider's). */
export interface KeyClient {
  apiKey: ApiKeyModel;
  $transaction<R>(fn: (tx: { apiKey: ApiKeyModel }) => Promise<R>): Promise<R>;
}

/** Scopes are stored space-separated (as OAuth writes them); anything unknown in the column grants nothing. */
function scopesOf(column: string): Scope[] {
  return SCOPES.filter((scope) => column.split(' ').includes(scope));
}

function toKey(row: KeyRow): ApiKeyRecord {
  if (!isPlan(row.plan)) throw new Error(`ApiKey ${row.id} has an unknown plan`);
  return { ...row, plan: row.plan, scopes: scopesOf(row.scopes) };
}

function toRow(key: NewApiKeyRow) {
  return { ...key, scopes: key.scopes.join(' ') };
}

/** Active at `now`: not revoked, and without an expiry or with one still ahead. */
const activeAt = (now: Date) => ({ revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] });
/** Every key of a lineage: its first key (`id`) and its successors (`lineageId`). */
const inLineage = (lineageId: number): KeyWhere => ({ OR: [{ id: lineageId }, { lineageId }] });
/** The lineage's keys other than `id` that are rotated out and still in their overlap at `now`. */
const overlapping = (key: Pick<ApiKeyRecord, 'id' | 'lineageId'>, now: Date): KeyWhere => ({
  AND: [inLineage(key.lineageId ?? key.id), { id: { not: key.id }, rotatedAt: { not: null }, revokedAt: null }],
  expiresAt: { gt: now },
});
/** What a change of a key means for the other key of its lineage: the same name, scopes and limits. */
function lineageShared(changes: ApiKeyUpdate) {
  const { expiresAt: _ownEnd, scopes, ...shared } = changes;
  return scopes ? { ...shared, scopes: scopes.join(' ') } : shared;
}

/** API keys through Prisma's model API, on either provider's generated client. */
export function prismaApiKeyStore(prisma: KeyClient): ApiKeyStore {
  return {
    async findByHash(hash) {
      const row = await prisma.apiKey.findUnique({ where: { hash } });
      return row ? toKey(row) : undefined;
    },
    async findById(id) {
      const row = await prisma.apiKey.findUnique({ where: { id } });
      return row ? toKey(row) : undefined;
    },
    async create(key) {
      return toKey(await prisma.apiKey.create({ data: toRow(key) }));
    },
    async list(page = {}) {
      const rows = await prisma.apiKey.findMany({
        orderBy: { id: 'asc' },
        ...(page.afterId !== undefined ? { where: { id: { gt: page.afterId } } } : {}),
        ...(page.limit !== undefined ? { take: page.limit } : {}),
      });
      return rows.map(toKey);
    },
    async lineage(lineageId) {
      const rows = await prisma.apiKey.findMany({ orderBy: { id: 'asc' }, where: inLineage(lineageId) });
      return rows.map(toKey);
    },
    update: (id, changes, now) => updateCurrent(prisma, id, changes, now),
    async revoke(match, at) {
      const where = 'id' in match ? { id: match.id } : { hash: match.hash };
      const row = await prisma.apiKey.findUnique({ where });
      if (!row) return undefined;
      if (row.revokedAt) return toKey(row);
      // Revoking twice keeps the first time, also when two revocations race.
      await prisma.apiKey.updateMany({ where: { id: row.id, revokedAt: null }, data: { revokedAt: at } });
      const after = await prisma.apiKey.findUnique({ where: { id: row.id } });
      return after ? toKey(after) : undefined;
    },
    rotate: (id, next, times) => rotateCurrent(prisma, id, next, times),
    async recordLastUsed(at, ids) {
      // Only forward: replicas flushing in any order leave the latest minute.
      await prisma.apiKey.updateMany({
        where: { id: { in: [...ids] }, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: at } }] },
        data: { lastUsedAt: at },
      });
    },
    async recordLastDeprecatedCall(at, ids) {
      await prisma.apiKey.updateMany({
        where: {
          id: { in: [...ids] },
          OR: [{ lastDeprecatedCallAt: null }, { lastDeprecatedCallAt: { lt: at } }],
        },
        data: { lastDeprecatedCallAt: at },
      });
    },
  };
}

/**
 * One transaction: the current key changes only while current and active; the other key of its lineage follows
 * (name, scopes and limits), and its overlap never outlives the lineage.
 */
async function updateCurrent(
  prisma: KeyClient,
  id: number,
  changes: ApiKeyUpdate,
  now: Date,
): Promise<ApiKeyRecord | undefined> {
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.apiKey.updateMany({
      where: { id, rotatedAt: null, ...activeAt(now) },
      data: changes.scopes ? { ...changes, scopes: changes.scopes.join(' ') } : { ...changes, scopes: undefined },
    });
    if (count === 0) return undefined;
    const row = await tx.apiKey.findUnique({ where: { id } });
    if (!row) return undefined;
    const shared = lineageShared(changes);
    if (Object.keys(shared).length > 0) await tx.apiKey.updateMany({ where: overlapping(row, now), data: shared });
    // An overlap never outlives its lineage: a new, earlier end ends the old secret no later.
    if (changes.expiresAt)
      await tx.apiKey.updateMany({
        where: { ...overlapping(row, now), expiresAt: { gt: changes.expiresAt } },
        data: { expiresAt: changes.expiresAt },
      });
    return toKey(row);
  });
}

/**
 * One transaction: the old key moves into its overlap only if it is current and active; the key before it, if still
 * in its own overlap, ends now (two active keys at most); the new key exists only if all that happened.
 */
async function rotateCurrent(
  prisma: KeyClient,
  id: number,
  next: NewApiKeyRow,
  { oldExpiresAt, now }: { oldExpiresAt: Date; now: Date },
): Promise<ApiKeyRecord | undefined> {
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.apiKey.updateMany({
      where: { id, rotatedAt: null, ...activeAt(now) },
      data: { expiresAt: oldExpiresAt, rotatedAt: now },
    });
    if (count === 0) return undefined;
    const lineage = { id, lineageId: next.lineageId };
    await tx.apiKey.updateMany({ where: overlapping(lineage, now), data: { expiresAt: now } });
    return toKey(await tx.apiKey.create({ data: toRow(next) }));
  });
}
