/**
 * A node:http server for an Express app whose requests and responses are created with the app's prototypes from the
 * start. Express's init middleware sets each request's and response's prototype to `app.request` / `app.response`;
 * on an object created otherwise that `Object.setPrototypeOf` leaves it in V8's slow mode, which cost more than every
 * feature of the service together (docs/architecture.md#fast-paths). Set to the prototype it already has, it changes
 * nothing.
 *
 * They are made by node's own constructors with the app's prototype (`Reflect.construct` with a new.target whose
 * `prototype` is the app's), so V8 lays them out as it lays out node's own: every field in the object. A function
 * that calls the constructor on its own `this` instead gives V8 no fields to reserve, and the objects it makes are
 * dictionaries (slow mode again: responses on every Node release, requests from Node 24), whose every property read
 * and write misses V8's inline caches.
 *
 * Rule relied on: `http.createServer` creates requests and responses with the `IncomingMessage` / `ServerResponse`
 * classes given in its options, calling them as constructors with node's own arguments; Express sets exactly
 * `app.request` / `app.response` as their prototypes. The canary (app-prototypes.test.ts) fails if either changes, or
 * if the objects are not in fast mode.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';

export function createAppServer(
  app: Express,
  options: http.ServerOptions = {},
  /** What answers each request, when not the app itself (a gate in front of it). */
  listener: http.RequestListener = app,
): http.Server {
  // Called with `new` by node:http; the object returned is the one node uses.
  function AppRequest(socket: Socket): http.IncomingMessage {
    return Reflect.construct(http.IncomingMessage, [socket], AppRequest) as http.IncomingMessage;
  }
  AppRequest.prototype = app.request;
  function AppResponse(...args: unknown[]): http.ServerResponse {
    return Reflect.construct(http.ServerResponse, args, AppResponse) as http.ServerResponse;
  }
  AppResponse.prototype = app.response;
  return http.createServer(
    {
      ...options,
      IncomingMessage: AppRequest as unknown as typeof http.IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof http.ServerResponse,
    },
    listener,
  );
}
