#!/usr/bin/env node
// Writes docs/query-functions.md from the query function definitions (run `npm run build` first;
// `npm run docs:functions` does both).
import { writeFileSync } from 'node:fs';
import { renderFunctionReference } from '../dist/query/functions/docs.js';

writeFileSync(new URL('../docs/query-functions.md', import.meta.url), renderFunctionReference());
