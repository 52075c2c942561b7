import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load.js';
import { openDatabaseWithRetry } from './database.js';

/** Start-up waits for a database that is not reachable yet (as the dependency-error classifier tells), nothing else. */
describe('openDatabaseWithRetry', () => {
  const retried = async (url: string, timeoutMs: number) => {
    const attempts: unknown[] = [];
    const opening = openDatabaseWithRetry(loadConfig({ DATABASE_URL: url }), {
      timeoutMs,
      onRetry: (err) => attempts.push(err),
    });
    return {
      attempts,
      error: await opening.then(
        () => undefined,
        (err: unknown) => err,
      ),
    };
  };

  it('retries while the server refuses connections, then gives up with the last error', async () => {
    const { attempts, error } = await retried('postgresql://postgres@127.0.0.1:1/nowhere', 3000);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('gives up at once on a wrong setup (a database that does not exist)', async () => {
    const { attempts, error } = await retried('postgresql://postgres@127.0.0.1:5432/animal_store_missing_db', 30_000);
    expect(attempts).toEqual([]);
    expect(error).toMatchObject({ code: '3D000' });
  });
});
