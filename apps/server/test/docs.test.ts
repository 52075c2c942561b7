/**
 * The docs page of the real built server (dist/main.js, started here on a temporary SQLite file), opened in a real
 * headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core). Set DOCS_SCREENSHOT=/path.png to keep
 * a screenshot of the rendered page.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@animal-store/test-services';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let dir: string;
let server: ChildProcess | undefined;
let origin: string;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`pnpm --filter @animal-store/server build\` first`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`apt-get install -y chromium\``);
  dir = mkdtempSync(join(tmpdir(), 'animal-store-docs-'));
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  let output = '';
  server = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `file:${join(dir, 'docs.db')}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode}:\n${output}`);
    const healthy = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (healthy) break;
    if (Date.now() > deadline) throw new Error(`the server did not answer GET /healthz within 30 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    const timer = setTimeout(() => server?.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('GET /docs', () => {
  it('serves the page and its assets without an API key, with no inline script and a strict CSP', async () => {
    const res = await fetch(`${origin}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await res.text();
    expect(html).toContain('data-spec-url="/v1/openapi.json"');
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, content] of scripts) {
      expect(attributes).toMatch(/src="\/docs\//);
      expect(content?.trim()).toBe('');
    }
    expect(html).not.toMatch(/https?:\/\//); // nothing from a CDN

    for (const [path, type] of [
      ['/docs/init.js', /javascript/],
      ['/docs/assets/swagger-ui-bundle.js', /javascript/],
      ['/docs/assets/swagger-ui.css', /css/],
    ] as const) {
      const asset = await fetch(`${origin}${path}`);
      expect(asset.status, path).toBe(200);
      expect(asset.headers.get('content-type'), path).toMatch(type);
    }
    expect((await fetch(`${origin}/docs/assets/index.html`)).status).toBe(404);
    expect((await fetch(`${origin}/docs/assets/..%2Fpackage.json`)).status).toBe(404);
  });

  it('renders the four operations in a real browser, getPet marked deprecated', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 1400 } });
    const problems: string[] = [];
    const foreign: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('request', (request) => {
      if (!request.url().startsWith(`${origin}/`) && !request.url().startsWith('data:')) foreign.push(request.url());
    });
    try {
      const response = await page.goto(`${origin}/docs`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      const operations = page.locator('.opblock');
      await operations.nth(3).waitFor({ timeout: 15_000 });
      expect(await operations.count()).toBe(4);

      const summaries = await operations.evaluateAll((blocks) =>
        blocks.map((block) => ({
          operation: block.querySelector('[data-path] a')?.getAttribute('href'),
          method: block.querySelector('.opblock-summary-method')?.textContent?.trim(),
          path: block.querySelector('[data-path]')?.getAttribute('data-path'),
          deprecated: block.classList.contains('opblock-deprecated'),
        })),
      );
      expect(summaries).toEqual(
        expect.arrayContaining([
          { operation: '#/pets/listPets', method: 'GET', path: '/v1/pets', deprecated: false },
          { operation: '#/pets/createPet', method: 'POST', path: '/v1/pets', deprecated: false },
          { operation: '#/pets/getPet', method: 'GET', path: '/v1/pets/{petId}', deprecated: true },
          { operation: '#/pets/getRateLimit', method: 'GET', path: '/v1/rate_limit', deprecated: false },
        ]),
      );
      await expect(page.locator('.opblock-deprecated .opblock-summary-description').innerText()).resolves.toMatch(
        /deprecated/i,
      );
      await expect(page.locator('.info .title').innerText()).resolves.toContain('Animal Store API');
      if (process.env.DOCS_SCREENSHOT) await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });
      expect(problems).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('renders the admin API on its own page, from its own document, linked from the public one', async () => {
    const document = await fetch(`${origin}/docs/admin-openapi.json`);
    expect(document.status).toBe(200);
    expect(((await document.json()) as { info: { title: string } }).info.title).toBe('Animal Store admin API');
    const page = await browser!.newPage({ viewport: { width: 1280, height: 1400 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    try {
      await page.goto(`${origin}/docs`, { waitUntil: 'load' });
      await page.getByRole('link', { name: 'Admin API' }).click();
      await page.waitForURL(`${origin}/docs/admin`);
      const operations = page.locator('.opblock');
      await operations.nth(7).waitFor({ timeout: 15_000 });
      expect(await operations.count()).toBe(8);
      const paths = await operations.evaluateAll((blocks) =>
        blocks.map(
          (block) =>
            `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block.querySelector('[data-path]')?.getAttribute('data-path')}`,
        ),
      );
      expect(paths.sort()).toEqual(
        [
          'POST /admin/v1/keys',
          'GET /admin/v1/keys',
          'GET /admin/v1/keys/{id}',
          'PATCH /admin/v1/keys/{id}',
          'POST /admin/v1/keys/{id}/revoke',
          'POST /admin/v1/keys/{id}/rotate',
          'GET /admin/v1/keys/{id}/usage',
          'DELETE /admin/v1/keys/{id}/ban',
        ].sort(),
      );
      await expect(page.locator('.info .title').innerText()).resolves.toContain('Animal Store admin API');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
