/**
 * Where the service runs. Each base URL ends in the version segment `/v1`, as the interface says; the contract's paths
 * carry `/v1` themselves, so a client strips it (see `serviceOrigin`).
 */
export const ENVIRONMENTS = {
  production: 'https://api.animal-store.example/v1',
  staging: 'https://staging.api.animal-store.example/v1',
} as const;
export type EnvironmentName = keyof typeof ENVIRONMENTS;

/** `https://host/v1` or `https://host/v1/` -> `https://host`; a URL without the version segment is returned unchanged. */
export function serviceOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}
