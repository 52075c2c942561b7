import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVER_ROOT } from '../config/server-root.js';

/** The service as telemetry names it: the resource's service.name default and service.version, build_info's version. */
export const SERVICE = {
  name: 'animal-store',
  version: (JSON.parse(readFileSync(join(SERVER_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
} as const;
