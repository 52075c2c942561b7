import { MAX_SAFE_ID, PetStatus, type NewPet, type Pet } from '@animal-store/contract';
import type { PrismaClient } from '../generated/sqlite/client.js';
import { PLANS, type ApiKeyRecord, type ApiKeyStore, type ListPetsOptions, type NewApiKey, type PetStore, type Plan } from './types.js';

/**
 * Prisma-backed stores. Both providers' generated clients have the same model API, so one implementation serves both;
 * it is typed against the SQLite client.
 */
type Client = Pick<PrismaClient, 'pet' | 'apiKey'>;

type PetRow = { id: bigint; name: string; categoryId: bigint; status: string | null };

/** int64 from the database -> JSON number; values beyond 2^53-1 cannot be sent exactly and are never rounded. */
function toSafeNumber(value: bigint, field: string): number {
  if (value > BigInt(MAX_SAFE_ID) || value < BigInt(-MAX_SAFE_ID)) {
    throw new Error(`${field} ${value} is beyond 2^53-1 and cannot be represented exactly`);
  }
  return Number(value);
}

function toPet(row: PetRow): Pet {
  const pet: Pet = { id: toSafeNumber(row.id, 'Pet.id'), name: row.name, categoryId: toSafeNumber(row.categoryId, 'Pet.categoryId') };
  if (row.status !== null) pet.status = PetStatus.parse(row.status);
  return pet;
}

const petSelect = { id: true, name: true, categoryId: true, status: true } as const;

export function prismaPetStore(prisma: Client): PetStore {
  return {
    async list({ limit, status, afterId }: ListPetsOptions) {
      const rows = await prisma.pet.findMany({
        select: petSelect,
        where: {
          ...(status !== undefined ? { status } : {}),
          ...(afterId !== undefined ? { id: { gt: BigInt(afterId) } } : {}),
        },
        orderBy: { id: 'asc' },
        take: limit,
      });
      return rows.map(toPet);
    },
    async create(pet: NewPet) {
      const row = await prisma.pet.create({
        select: petSelect,
        data: { name: pet.name, categoryId: BigInt(pet.categoryId), status: pet.status ?? null },
      });
      return toPet(row);
    },
    async get(id: number) {
      const row = await prisma.pet.findUnique({ select: petSelect, where: { id: BigInt(id) } });
      return row ? toPet(row) : undefined;
    },
  };
}

type KeyRow = Omit<ApiKeyRecord, 'plan'> & { plan: string };

function toKey(row: KeyRow): ApiKeyRecord {
  if (!(PLANS as readonly string[]).includes(row.plan)) throw new Error(`ApiKey ${row.id} has an unknown plan`);
  return { ...row, plan: row.plan as Plan };
}

export function prismaApiKeyStore(prisma: Client): ApiKeyStore {
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
