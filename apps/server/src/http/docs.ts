/**
 * The human docs page: Swagger UI at `/docs`, rendering the OpenAPI document the service serves (`/v1/openapi.json`).
 * Every asset comes from the `swagger-ui-dist` npm package (no CDN) and the page runs no inline script: a small
 * `/docs/init.js` starts Swagger UI. Mount it outside `/v1`, authentication and rate limits: `app.use(docsRouter())`.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import express, { type Response, type Router } from 'express';

export interface DocsOptions {
  /** Where the page fetches the OpenAPI document from (same origin). Default `/v1/openapi.json`. */
  specUrl?: string;
}

const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The only files of swagger-ui-dist the page needs (its demo index.html and initializer are left out). */
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-16x16.png', 'favicon-32x32.png']);

/**
 * Scripts and styles from this origin only. Swagger UI sets element styles from script, hence the inline-style
 * allowance; `connect-src 'self'` keeps "Try it out" and the document fetch on this server.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Starts Swagger UI on the document named by the page, listing this server first among the `servers` so that
 * "Try it out" talks to the service that serves the page (the document's own servers are production and staging).
 */
const INIT_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('swagger-ui');
  var specUrl = new URL(root.getAttribute('data-spec-url'), window.location.href);
  fetch(specUrl, { headers: { accept: 'application/json' } })
    .then(function (response) {
      if (!response.ok) throw new Error('GET ' + specUrl.pathname + ' answered ' + response.status);
      return response.json();
    })
    .then(function (spec) {
      var here = new URL('..', specUrl).href.replace(/\\/+$/, '');
      spec.servers = [{ url: here, description: 'This server' }].concat(spec.servers || []);
      window.ui = SwaggerUIBundle({
        spec: spec,
        domNode: root,
        deepLinking: true,
        validatorUrl: null,
        presets: [SwaggerUIBundle.presets.apis],
        layout: 'BaseLayout',
        defaultModelsExpandDepth: 1,
        displayRequestDuration: true,
      });
    })
    .catch(function (error) {
      root.textContent = 'Could not load the API description: ' + error.message;
      root.setAttribute('role', 'alert');
    });
})();
`;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);

function page(base: string, specUrl: string): string {
  const asset = (file: string) => escapeHtml(`${base}/docs/assets/${file}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Animal Store API</title>
<link rel="stylesheet" href="${asset('swagger-ui.css')}">
<link rel="icon" type="image/png" sizes="32x32" href="${asset('favicon-32x32.png')}">
<link rel="icon" type="image/png" sizes="16x16" href="${asset('favicon-16x16.png')}">
</head>
<body>
<noscript>This page needs JavaScript. The API description itself is at <a href="${escapeHtml(specUrl)}">${escapeHtml(specUrl)}</a>.</noscript>
<div id="swagger-ui" data-spec-url="${escapeHtml(specUrl)}"></div>
<script src="${asset('swagger-ui-bundle.js')}"></script>
<script src="${escapeHtml(`${base}/docs/init.js`)}"></script>
</body>
</html>
`;
}

function secure(res: Response): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
}

export function docsRouter(options: DocsOptions = {}): Router {
  const specUrl = options.specUrl ?? '/v1/openapi.json';
  const router = express.Router();

  router.get('/docs', (req, res) => {
    secure(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(page(req.baseUrl, specUrl));
  });

  router.get('/docs/init.js', (_req, res) => {
    secure(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/javascript').send(INIT_SCRIPT);
  });

  router.get('/docs/assets/:file', (req, res, next) => {
    const file = req.params.file;
    if (!ASSETS.has(file)) return next();
    secure(res);
    res.sendFile(file, { root: SWAGGER_UI_DIR, maxAge: '1d' }, (err) => {
      if (err) next(err);
    });
  });

  return router;
}
