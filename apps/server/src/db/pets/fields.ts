import { NewPet, Pet } from '@animal-store/contract';
import type { z } from 'zod';
import type { PetModel as PostgresPetModel } from '../../generated/postgresql/models.js';
import type { PetModel as SqlitePetModel } from '../../generated/sqlite/models.js';

/**
 * The Pet's fields, derived from the contract's schema: the one declaration every column list, insert, row mapper,
 * JSON builder (TypeScript and SQL) and the idempotency fingerprint are made from. A field is stored in the `Pet`
 * column of its name (models.prisma, one migration per provider), as its kind says:
 * - `int64`: an integer (zod `.int()`), a BigInt column; answered exactly up to 2^53-1, refused beyond, never rounded;
 * - `text`: a string, a String column;
 * - `enum`: one of the values of a zod enum, a String column; a stored value outside them is refused.
 * An optional field is a nullable column, and absent (not null) in JSON when NULL. Any other zod type stops the
 * process at load with the field's name: teach {@link kindOf} the new kind first.
 */
export type PetFieldKind = 'int64' | 'text' | 'enum';

export interface PetField {
  readonly name: Extract<keyof Pet, string>;
  readonly kind: PetFieldKind;
  readonly optional: boolean;
  /** `enum`: the values a stored value must be one of. */
  readonly values: ReadonlySet<string> | undefined;
}

type Described = { kind: PetFieldKind; optional: boolean; values?: readonly string[] };

/** The kind of a zod field of Pet, unwrapping optional, default and refinements. */
function kindOf(name: string, schema: z.ZodTypeAny, optional = false): Described {
  const def = schema._def as { typeName?: string; innerType?: z.ZodTypeAny; schema?: z.ZodTypeAny };
  switch (def.typeName) {
    case 'ZodOptional':
      return kindOf(name, def.innerType!, true);
    case 'ZodDefault':
      return kindOf(name, def.innerType!, optional);
    case 'ZodEffects':
      return kindOf(name, def.schema!, optional);
    case 'ZodString':
      return { kind: 'text', optional };
    case 'ZodEnum':
      return { kind: 'enum', optional, values: (schema as z.ZodEnum<[string, ...string[]]>).options };
    case 'ZodNumber':
      if ((schema as z.ZodNumber).isInt) return { kind: 'int64', optional };
      break;
    default:
      break;
  }
  throw new Error(`Pet.${name}: ${def.typeName ?? 'this type'} has no column kind (see db/pets/fields.ts)`);
}

const field = (name: string): PetField => {
  const described = kindOf(name, Pet.shape[name as keyof typeof Pet.shape]);
  const values = described.values ? new Set(described.values) : undefined;
  return { name: name as PetField['name'], kind: described.kind, optional: described.optional, values };
};

/** Every field of a Pet in the order of its JSON: `id` first, then the contract's fields as it declares them. */
export const PET_FIELDS: readonly PetField[] = ['id', ...Object.keys(Pet.shape).filter((n) => n !== 'id')].map(field);

/** The fields a create writes: what the client sends (`NewPet`), in the same order. */
export const NEW_PET_FIELDS: readonly PetField[] = PET_FIELDS.filter((f) => f.name in NewPet.shape);

// The JSON opens with the id (no optional field first), and every other field is one a client sends.
if (PET_FIELDS[0]!.kind !== 'int64' || PET_FIELDS[0]!.optional) throw new Error('Pet.id must be a required integer');
for (const f of PET_FIELDS) {
  if (f.name !== 'id' && !NEW_PET_FIELDS.includes(f))
    throw new Error(`Pet.${f.name} is not in NewPet: only the id is assigned by the database`);
}

/** The column type a field is stored as: int64 as BigInt, text and enums as String, an optional one nullable. */
type Stored<V> = (undefined extends V ? null : never) | (NonNullable<V> extends number ? bigint : string);
/** The Pet fields `Model` (a generated Prisma model) does not store as {@link Stored} says. */
type Disagreeing<Model> = {
  [K in keyof Pet]-?: K extends keyof Model
    ? [Stored<Pet[K]>] extends [Model[K]]
      ? [Model[K]] extends [Stored<Pet[K]>]
        ? never
        : K
      : K
    : K;
}[keyof Pet];
/**
 * Fails typecheck, naming the field, when the contract declares a Pet field that models.prisma lacks or stores
 * otherwise (then `pnpm --filter @animal-store/server generate`, and write one migration per provider).
 */
type Agrees<Model> = [Disagreeing<Model>] extends [never] ? true : Disagreeing<Model>;
export const MODELS_AGREE: [Agrees<SqlitePetModel>, Agrees<PostgresPetModel>] = [true, true];
