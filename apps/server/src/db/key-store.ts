import { isPlan } from '@animal-store/rate-limit';
import type { PrismaClient } from '../generated/sqlite/client.js';
import type { ApiKeyRecord, ApiKeyStore, NewApiKey } from './types.js';

type KeyRow = Omit<ApiKeyRecord, 'plan'> & { plan: string };

function toKey(row: KeyRow): ApiKeyRecord {
  if (!isPlan(row.plan)) throw new Error(`ApiKey ${row.id} has an unknown plan`);
  return { ...row, plan: row.plan };
}

/** API keys through Prisma (either provider's client; see pet-store.ts). */
export function prismaApiKeyStore(prisma: Pick<PrismaClient, 'apiKey'>): ApiKeyStore {
  return {
    async findByHash(hash) {
      const row = await prisma.apiKey.findUnique({ where: { hash } });
      return row ? toKey(row) : undefined;
    },
    async create(key: NewApiKey) {
      return toKey(await prisma.apiKey.create({ data: key }));
    },
    async list() {
      return (await prisma.apiKey.findMany({ orderBy: { id: 'asc' } })).map(toKey);
    },
    async revoke(match, at) {
      const where = 'id' in match ? { id: match.id } : { hash: match.hash };
      const row = await prisma.apiKey.findUnique({ where });
      if (!row) return undefined;
      if (row.revokedAt) return toKey(row);
      return toKey(await prisma.apiKey.update({ where: { id: row.id }, data: { revokedAt: at } }));
    },
  };
}
