export { startHttpServer, type HttpServer, type HttpServerOptions } from './server.js';
export { buildRouter } from './app.js';
export { closeQueryStreams } from './routes/query.js';
export { Router } from './router.js';
export type { HttpServices } from './context.js';
export type { Route, Reply, RequestInfo } from './types.js';
