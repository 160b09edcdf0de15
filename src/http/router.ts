/**
 * Method + path routing over literal segments and `:param` segments. Routes are compiled once into a
 * tree keyed by segment; a lookup walks the path's segments, preferring literals over parameters.
 */
import { LogsvcError } from '../lib/errors.js';
import type { BeforeBody, Route } from './types.js';

interface Node {
  literal: Map<string, Node>;
  param: { name: string; node: Node } | null;
  routes: Map<string, Route>;
}

const newNode = (): Node => ({ literal: new Map(), param: null, routes: new Map() });

export type RouteMatch = { route: Route; params: Record<string, string> } | { allowed: string[] } | null;

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

export class Router {
  private readonly root = newNode();
  /** Run by the server before it reads any request body: the pre-body credential check. */
  beforeBody: BeforeBody | null = null;

  add(route: Route): this {
    let node = this.root;
    for (const seg of splitPath(route.pattern)) {
      if (seg.startsWith(':')) {
        const name = seg.slice(1);
        if (node.param !== null && node.param.name !== name) throw new Error(`route ${route.pattern}: parameter :${name} conflicts with :${node.param.name}`);
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.literal.get(seg);
        if (next === undefined) node.literal.set(seg, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`route ${route.method} ${route.pattern} registered twice`);
    node.routes.set(route.method, route);
    return this;
  }

  /** `rawPath` is the still-encoded request path; each segment is decoded after splitting. */
  match(method: string, rawPath: string): RouteMatch {
    const segs = splitPath(rawPath);
    const params: Record<string, string> = {};
    const found = this.walk(this.root, segs, 0, params);
    if (found === null) return null;
    const route = found.routes.get(method);
    if (route === undefined) return found.routes.size === 0 ? null : { allowed: [...found.routes.keys()] };
    return { route, params };
  }

  private walk(node: Node, segs: string[], i: number, params: Record<string, string>): Node | null {
    if (i === segs.length) return node;
    const seg = decodeSegment(segs[i]!);
    const lit = node.literal.get(seg);
    if (lit !== undefined) {
      const r = this.walk(lit, segs, i + 1, params);
      if (r !== null && r.routes.size > 0) return r;
    }
    if (node.param !== null) {
      const r = this.walk(node.param.node, segs, i + 1, params);
      if (r !== null) {
        params[node.param.name] = seg;
        return r;
      }
    }
    return null;
  }
}

function decodeSegment(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    throw new LogsvcError('E_BAD_REQUEST', `malformed percent-encoding in path segment "${seg.slice(0, 100)}"`);
  }
}
