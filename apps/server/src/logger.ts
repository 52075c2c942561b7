import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** JSON logs. Keys and Authorization headers are never logged: nothing logs request headers, and these paths are redacted anyway. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'animal-store' },
      redact: {
        paths: ['authorization', 'headers.authorization', 'req.headers.authorization', 'apiKey', 'rawKey'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
