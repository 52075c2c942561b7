/**
 * The framework floor: the workspace's Express (same version the server uses) answering the canned 20-pet page with
 * Express defaults (res.send computes an ETag and Content-Length). No auth, database, limiter, validation or logging.
 */
import express from 'express';
import { cannedPage } from '../page.js';

const body = cannedPage();
const port = Number(process.env['PORT'] ?? 0);
const app = express();
app.get('/v1/pets', (_req, res) => {
  res.type('application/json').send(body);
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
const server = app.listen(port, '127.0.0.1');
server.keepAliveTimeout = 65_000;
process.once('SIGTERM', () => server.close(() => process.exit(0)));
