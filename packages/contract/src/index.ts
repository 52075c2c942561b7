export * from './schemas.js';
export * from './errors.js';
export * from './headers.js';
export * from './contract.js';
export * from './environments.js';
