import { describe, expect, it } from 'vitest';
import { printable, printableJson } from './printable.js';

describe('printable', () => {
  it('escapes every control character and lone surrogate, and nothing else', () => {
    expect(printable('red\u001b[31m\u009b2J\u0000\u007f\ud800 ok \u{1F415} é')).toBe(
      'red\\u001b[31m\\u009b2J\\u0000\\u007f\\ud800 ok \u{1F415} é',
    );
    expect(JSON.parse(printableJson({ name: 'a\u0085b\u001bc' }))).toEqual({ name: 'a\u0085b\u001bc' });
    expect(printableJson({ name: 'a\u0085b' })).not.toMatch(/[\u0080-\u009f]/);
  });
});
