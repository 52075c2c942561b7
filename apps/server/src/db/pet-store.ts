import type { NewPet } from '@animal-store/contract';
import type { PrismaClient } from '../generated/sqlite/client.js';
import { pageOfPets } from './pet-page.js';
import { fromPrisma, petSelect } from './pet-rows.js';
import type { PetReads } from './pet-sql.js';
import type { PetWrites } from './pet-writes.js';
import type { ListPetsOptions, PetStore } from './types.js';

/**
 * Pets through Prisma. Both providers' generated clients have the same model API, so one implementation serves both
 * (typed against the SQLite client). `reads`, when given, answers list and get instead (see {@link PetReads}), and
 * `writes` creates (group commit, idempotency records: see pet-writes.ts). Idempotent creates need `writes`.
 */
export function prismaPetStore(prisma: Pick<PrismaClient, 'pet'>, reads?: PetReads, writes?: PetWrites): PetStore {
  const store: PetStore = {
    async list({ limit, status, afterId }: ListPetsOptions) {
      const rows = await prisma.pet.findMany({
        select: petSelect,
        where: {
          ...(status !== undefined ? { status } : {}),
          ...(afterId !== undefined ? { id: { gt: BigInt(afterId) } } : {}),
        },
        orderBy: { id: 'asc' },
        take: limit + 1,
      });
      return pageOfPets(rows.map(fromPrisma), limit);
    },
    async create(pet: NewPet) {
      const row = await prisma.pet.create({
        select: petSelect,
        data: { name: pet.name, categoryId: BigInt(pet.categoryId), status: pet.status ?? null },
      });
      return fromPrisma(row);
    },
    createOnce() {
      return Promise.reject(new Error('idempotent creates are made by the prepared writer (pet-writes.ts)'));
    },
    async get(id: number) {
      const row = await prisma.pet.findUnique({ select: petSelect, where: { id: BigInt(id) } });
      return row ? fromPrisma(row) : undefined;
    },
  };
  return {
    ...store,
    ...(reads ? { list: reads.list, get: reads.get } : {}),
    ...(writes ? { create: writes.create, createOnce: writes.createOnce } : {}),
  };
}
