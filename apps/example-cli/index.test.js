// Runs the CLI as a user would (node index.js, environment variables) against a small stateful peer on 127.0.0.1.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('./index.js', import.meta.url));
const KEY = 'ask_cli_test_key_123456';
const pets = [];
const requests = [];
let baseUrl;
let server;

/** GET /v1/pets pages by `limit` with a numeric cursor and a relative Link; POST /v1/pets adds; 401 without the key. */
function handle(req, res, body) {
  const url = new URL(req.url, 'http://peer');
  requests.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
  const send = (status, payload, headers = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(payload));
  };
  if (req.headers.authorization !== `Bearer ${KEY}`)
    return send(401, { code: 'unauthorized', message: 'Missing or invalid API key', status: 401 });
  if (url.pathname !== '/v1/pets') return send(404, { code: 'not_found', message: 'No route', status: 404 });
  if (req.method === 'POST') {
    const pet = { id: pets.length + 1, ...JSON.parse(body) };
    pets.push(pet);
    return send(201, pet, { Location: `/v1/pets/${pet.id}` });
  }
  const limit = Number(url.searchParams.get('limit') ?? 20);
  const start = Number(url.searchParams.get('cursor') ?? 0);
  const matching = pets.filter((p) => !url.searchParams.get('status') || p.status === url.searchParams.get('status'));
  const page = matching.slice(start, start + limit);
  const next = new URLSearchParams(url.searchParams);
  next.set('cursor', String(start + limit));
  send(200, page, start + limit < matching.length ? { Link: `</v1/pets?${next}>; rel="next"` } : {});
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => handle(req, res, body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${server.address().port}/v1`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

function cli(args, env = {}) {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, ANIMAL_STORE_URL: baseUrl, ANIMAL_STORE_API_KEY: KEY, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }),
    );
  });
}

it('creates pets and lists them across pages, with a status filter', async () => {
  expect(await cli(['create', 'Rex', '3000000000'])).toEqual({ code: 0, stdout: '1\tRex\t3000000000\t\n', stderr: '' });
  expect((await cli(['create', 'Tom', '9007199254740991', '--status', 'sold'])).stdout).toBe(
    '2\tTom\t9007199254740991\tsold\n',
  );
  expect((await cli(['create', 'Kit', '5', '--status', 'sold'])).code).toBe(0);
  expect(pets).toHaveLength(3);

  const all = await cli(['list', '--page-size', '2']);
  expect(all).toEqual({
    code: 0,
    stdout: '1\tRex\t3000000000\t\n2\tTom\t9007199254740991\tsold\n3\tKit\t5\tsold\n',
    stderr: '',
  });
  expect(requests.filter((r) => r.method === 'GET').map((r) => r.url)).toEqual([
    '/v1/pets?limit=2',
    '/v1/pets?limit=2&cursor=2',
  ]);

  const sold = await cli(['list', '--status', 'sold']);
  expect(sold.stdout).toBe('2\tTom\t9007199254740991\tsold\n3\tKit\t5\tsold\n');
  expect(requests.at(-1).url).toBe('/v1/pets?status=sold');
  expect(requests.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);
});

it('refuses bad usage with exit code 2 before sending anything', async () => {
  const before = requests.length;
  for (const args of [
    [],
    ['create', 'Rex'],
    ['create', 'Rex', '1.5'],
    ['create', 'Rex', '9007199254740992'],
    ['list', '--status', 'lost'],
    ['list', '--bogus'],
  ]) {
    const result = await cli(args);
    expect(result.code, args.join(' ')).toBe(2);
    expect(result.stderr).toContain('usage:');
  }
  expect((await cli(['list'], { ANIMAL_STORE_API_KEY: '' })).stderr).toContain('ANIMAL_STORE_API_KEY is not set');
  expect(requests).toHaveLength(before);
});

it('reports API errors with exit code 1 and never prints the key', async () => {
  const wrongKey = 'ask_wrong_key_987654321';
  const created = await cli(['create', 'Rex', '3'], { ANIMAL_STORE_API_KEY: wrongKey });
  expect(created).toMatchObject({ code: 1, stdout: '' });
  expect(created.stderr).toContain('create failed: 401 unauthorized');
  const listed = await cli(['list'], { ANIMAL_STORE_API_KEY: wrongKey });
  expect(listed.code).toBe(1);
  expect(listed.stderr).toMatch(/answered 401 \(unauthorized\)/);
  for (const output of [created, listed]) expect(output.stdout + output.stderr).not.toContain(wrongKey);
});
