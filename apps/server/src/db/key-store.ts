import { SCOPES, type Scope } from '@animal-store/contract';
import { isPlan } from '@animal-store/rate-limit';
import type { PrismaClient } from '../generated/sqlite/client.js';
import type { ApiKeyRecord, ApiKeyStore, NewApiKeyRow } from './types.js';

type Client = Pick<PrismaClient, 'apiKey' | '$transaction'>;

type KeyRow = Omit<ApiKeyRecord, 'plan' | 'scopes'> & { plan: string; scopes: string };

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

/** API keys through Prisma (either provider's client; see pet-store.ts). */
export function prismaApiKeyStore(prisma: Client): ApiKeyStore {
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
    async update(id, changes) {
      // One conditional statement: a key revoked meanwhile is left alone.
      const { count } = await prisma.apiKey.updateMany({
        where: { id, revokedAt: null },
        data: changes.scopes ? { ...changes, scopes: changes.scopes.join(' ') } : { ...changes, scopes: undefined },
      });
      if (count === 0) return undefined;
      const row = await prisma.apiKey.findUnique({ where: { id } });
      return row ? toKey(row) : undefined;
    },
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
    async rotate(id, next, { oldExpiresAt, now }) {
      // One transaction: the old key's expiry moves only if it is still active, and the new key exists only if it did.
      return prisma.$transaction(async (tx) => {
        const { count } = await tx.apiKey.updateMany({
          where: { id, ...activeAt(now) },
          data: { expiresAt: oldExpiresAt },
        });
        if (count === 0) return undefined;
        return toKey(await tx.apiKey.create({ data: toRow(next) }));
      });
    },
    async recordLastUsed(at, ids) {
      // Only forward: replicas flushing in any order leave the latest minute.
      await prisma.apiKey.updateMany({
        where: { id: { in: [...ids] }, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: at } }] },
        data: { lastUsedAt: at },
      });
    },
  };
}
