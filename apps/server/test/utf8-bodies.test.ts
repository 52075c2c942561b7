import { CreatedApiKey } from '@animal-store/contract';
import { describe, expect, it } from 'vitest';
import { adminRequest, ADMIN_TOKEN, keysTable } from './admin-helpers.js';
import { auth, expectError, PROVIDERS, useTestServer } from './helpers.js';

/** `{"name":"a<bytes>b", ...rest}` as raw bytes. */
function bodyWith(bytes: number[], rest: string): Uint8Array {
  return Buffer.concat([Buffer.from('{"name":"a'), Buffer.from(bytes), Buffer.from(`b"${rest}}`)]);
}

/** Byte sequences that are not UTF-8: stray bytes, an overlong encoding, an encoded surrogate, a cut sequence. */
const NOT_UTF8: [string, number[]][] = [
  ['0xff 0xfe', [0xff, 0xfe]],
  ['an overlong "/"', [0xc0, 0xaf]],
  ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ['a cut sequence', [0xe2, 0x82]],
];

/** #24 item 17: a body that is not UTF-8 is refused, never decoded to U+FFFD and stored, on both databases. */
describe.each(PROVIDERS)('bodies that are not UTF-8, on %s', (provider) => {
  const ctx = useTestServer(provider, { adminToken: ADMIN_TOKEN }, { plan: 'pro' });

  const pets = async () =>
    (await (await fetch(`${ctx.server.url}/v1/pets?limit=100`, { headers: auth(ctx.key) })).json()) as [];

  it.each(NOT_UTF8)('a pet name with %s is a 400 and no pet', async (_what, bytes) => {
    const res = await fetch(`${ctx.server.url}/v1/pets`, {
      method: 'POST',
      headers: auth(ctx.key, { 'Content-Type': 'application/json', 'Idempotency-Key': `utf8-${bytes.join('-')}` }),
      body: bodyWith(bytes, ',"categoryId":1'),
    });
    await expectError(res, 400, 'invalid_request', 'UTF-8');
    expect(await pets()).toEqual([]);
  });

  it.each(NOT_UTF8)('a key name with %s is a 400 on create and PATCH, changing no key', async (_what, bytes) => {
    const created = await adminRequest(ctx.server, 'POST', '/keys', { plan: 'pro', name: 'kept' });
    const { id } = CreatedApiKey.parse(await created.json()).key;
    const before = await keysTable(ctx.server);
    for (const [method, path, rest] of [
      ['POST', '/keys', ',"plan":"pro"'],
      ['PATCH', `/keys/${id}`, ''],
    ] as const) {
      const refused = await fetch(`${ctx.server.url}/admin/v1${path}`, {
        method,
        headers: auth(ADMIN_TOKEN, { 'Content-Type': 'application/json' }),
        body: bodyWith(bytes, rest),
      });
      await expectError(refused, 400, 'invalid_request', 'UTF-8');
    }
    expect(await keysTable(ctx.server)).toBe(before);
  });

  it('a body in another charset is a 415; UTF-8 of every plane is stored as sent', async () => {
    const utf16 = await fetch(`${ctx.server.url}/v1/pets`, {
      method: 'POST',
      headers: auth(ctx.key, { 'Content-Type': 'application/json; charset=utf-16le' }),
      body: Buffer.from('{"name":"Rex","categoryId":1}', 'utf16le'),
    });
    await expectError(utf16, 415, 'unsupported_media_type', 'UTF-8');
    expect(await pets()).toEqual([]);
    const name = 'é\u4e2d\u{1F415}';
    const res = await fetch(`${ctx.server.url}/v1/pets`, {
      method: 'POST',
      headers: auth(ctx.key, { 'Content-Type': 'application/json; charset=UTF-8' }),
      body: Buffer.from(JSON.stringify({ name, categoryId: 1 }), 'utf8'),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { name: string }).name).toBe(name);
  });
});
