/** The ceiling: bare node:http answering the canned 20-pet page. No framework, auth, database or limiter. */
import { createServer } from 'node:http';
import { cannedPage } from '../page.js';

const body = Buffer.from(cannedPage());
const port = Number(process.env['PORT'] ?? 0);
const server = createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
