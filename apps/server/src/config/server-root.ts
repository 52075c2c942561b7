import { fileURLToPath } from 'node:url';

/** apps/server: relative `file:` database paths and the migrations are found from here, whoever runs the process. */
export const SERVER_ROOT = fileURLToPath(new URL('../..', import.meta.url));
