export * from './schemas.js';
export * from './errors.js';
export * from './headers.js';
export * from './contract.js';
export * from './environments.js';
export * from './keys.js';
export * from './admin-schemas.js';
export * from './admin-contract.js';
