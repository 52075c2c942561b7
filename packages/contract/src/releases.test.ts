import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLIENT_PRODUCT, RELEASES, clientVersionOf } from './releases.js';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

describe('RELEASES', () => {
  it("starts with this package's version", () => {
    expect(RELEASES[0]).toBe(version);
    for (const release of RELEASES) expect(release).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('clientVersionOf', () => {
  it("reads the client's version when it is a release", () => {
    expect(clientVersionOf(`${CLIENT_PRODUCT}/${version} node/24.11.0`)).toBe(version);
    expect(clientVersionOf(`stock-sync/2.1 ${CLIENT_PRODUCT}/${version}`)).toBe(version);
  });

  it('is `other` for anything else, so the label set stays bounded', () => {
    for (const userAgent of [
      undefined,
      '',
      'curl/8.5.0',
      `${CLIENT_PRODUCT}/99.0.0 node/24.11.0`,
      `${CLIENT_PRODUCT}/${version}-evil node/1`,
      `x${CLIENT_PRODUCT}/${version}`,
      `${CLIENT_PRODUCT}/`,
    ])
      expect(clientVersionOf(userAgent)).toBe('other');
  });
});
