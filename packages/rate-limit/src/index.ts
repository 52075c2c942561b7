export type {
  BanPolicy,
  NamedStore,
  RateLimitStore,
  RefundRequest,
  StoreAnswer,
  StoreRequest,
  StoreResult,
  WindowLimit,
} from './types.js';
export { DAY_MS, MINUTE_MS, minuteAndDay } from './windows.js';
export { createLimiter, refundDecision } from './limiter.js';
export type { LimiterOptions, RateLimitDecision, RateLimiter, WindowState } from './limiter.js';
export { createMemoryStore } from './memory-store.js';
export type { MemoryStore, MemoryStoreOptions } from './memory-store.js';
export { RATE_LIMIT_LUA } from './lua-scripts/rate-limit.js';
export { REFUND_LUA } from './lua-scripts/refund.js';
export { createRedisClient, createRedisStore } from './redis-store.js';
export type { RedisClientOptions, RedisStore, RedisStoreOptions } from './redis-store.js';
export { createRedisClusterClient, parseClusterNodes } from './redis-cluster-client.js';
export type { ClusterNodeAddress, RedisClusterClientOptions } from './redis-cluster-client.js';
export { createResilientStore } from './resilient-store.js';
export type { ResilientStore, ResilientStoreOptions } from './resilient-store.js';
export { RateLimitStoreUnavailableError } from './errors.js';
export { rateLimitErrorBody, rateLimitHeaders, usageHeaders } from './headers.js';
export type { RateLimitErrorBody } from './headers.js';
export { rateLimit } from './middleware.js';
export type { NextFunction, RateLimitHooks, RateLimitIdentity, RateLimitMiddlewareOptions } from './middleware.js';
export { readUsage } from './usage.js';
export type { UsageSnapshot } from './usage.js';
export { createOutageGuard } from './outage-guard.js';
export type { GuardedResult, OutageGuard, OutageGuardOptions } from './outage-guard.js';
export type { ConcurrencyStore, LeaseRequest, LeaseResult } from './concurrency/types.js';
export { createConcurrencyLimiter } from './concurrency/limiter.js';
export type { ConcurrencyDecision, ConcurrencyLimiter, ConcurrencyLimiterOptions } from './concurrency/limiter.js';
export { createMemoryConcurrencyStore } from './concurrency/memory-store.js';
export type { MemoryConcurrencyStore, MemoryConcurrencyStoreOptions } from './concurrency/memory-store.js';
export { CONCURRENCY_LUA } from './lua-scripts/concurrency.js';
export { createRedisConcurrencyStore } from './concurrency/redis-store.js';
export type { RedisConcurrencyStore, RedisConcurrencyStoreOptions } from './concurrency/redis-store.js';
export { createResilientConcurrencyStore } from './concurrency/resilient-store.js';
export type { ResilientConcurrencyStoreOptions } from './concurrency/resilient-store.js';
export { concurrencyLimit } from './concurrency/middleware.js';
export type { ConcurrencyIdentity, ConcurrencyLimitOptions } from './concurrency/middleware.js';
