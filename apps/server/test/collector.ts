import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's collector, callable from a test run without --expose-gc. The flag is on only while a new context is made to
 * fetch `gc`, so no other test's context gets one.
 */
export function collector(): () => void {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
