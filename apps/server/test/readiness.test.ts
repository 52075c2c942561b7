import { describe, expect, it } from 'vitest';
import { expectError, useTestServer } from './helpers.js';

/** #24 item 18: every 503 carries Retry-After, /readyz's included. */
describe('/readyz while shutting down', () => {
  const ctx = useTestServer('sqlite', { isShuttingDown: () => true });
  it('answers 503 service_unavailable with Retry-After', async () => {
    const res = await fetch(`${ctx.server.url}/readyz`);
    expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    await expectError(res, 503, 'service_unavailable');
  });
});
