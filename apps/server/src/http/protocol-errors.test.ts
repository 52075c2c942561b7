import { Agent, createServer, get, type ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { collector } from '../../test/collector.js';
import { listenLocally } from '../../test/listen.js';
import { answerProtocolErrors } from './protocol-errors.js';

/** GETs `url` on `agent` and reads the whole answer. */
function fetchOn(agent: Agent, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

describe('answerProtocolErrors', () => {
  it('lets an idle keep-alive connection drop its last answered request and response', async () => {
    const gc = collector();
    const responses: WeakRef<ServerResponse>[] = [];
    const server = createServer((_req, res) => {
      responses.push(new WeakRef(res));
      res.end('ok');
    });
    answerProtocolErrors(server);
    const { origin, close } = await listenLocally(server);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect(await fetchOn(agent, `${origin}/first`)).toBe('ok');
      expect(await fetchOn(agent, `${origin}/second`)).toBe('ok');
      // The one connection stays open and idle in the agent's pool, as a client's between two requests.
      expect(Object.values(agent.freeSockets).flat()).toHaveLength(1);
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        gc();
      }
      expect(responses.map((r) => r.deref() === undefined)).toEqual([true, true]);
    } finally {
      agent.destroy();
      await close();
    }
  });
});
