/**
 * The framework floor: the workspace's Express (same version the server uses) answering the canned 20-pet page with
 * Express defaults (res.send computes an ETag and Content-Length). No auth, database, limiter, validation or logging.
 *
 * It runs on the same HTTP server construction as the service (`createServer` of paths.ts's SERVER_CONSTRUCTION:
 * requests and responses created with the app's prototypes), so the ratio prices the service's features, not a server
 * setup the floor lacks. `FLOOR_SERVER=plain` runs it on Express's own `app.listen`, as a typical Express app does.
 */
import type { Server } from 'node:http';
import express, { type Express } from 'express';
import { cannedPage } from '../page.js';
import { SERVER_CONSTRUCTION } from '../paths.js';

const body = cannedPage();
const port = Number(process.env['PORT'] ?? 0);
const app = express();
app.get('/v1/pets', (_req, res) => {
  res.type('application/json').send(body);
});
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
let server: Server;
if (process.env['FLOOR_SERVER'] === 'plain') {
  server = app.listen(port, '127.0.0.1');
} else {
  const { createServer } = (await import(SERVER_CONSTRUCTION)) as {
    createServer: (app: Express) => Server;
  };
  server = createServer(app).listen(port, '127.0.0.1');
}
server.keepAliveTimeout = 65_000;
process.once('SIGTERM', () => server.close(() => process.exit(0)));
